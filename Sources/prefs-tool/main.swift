print("prefs-tool")
