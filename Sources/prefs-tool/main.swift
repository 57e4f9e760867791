import Foundation

// Only dispatches: the commands live in Commands/.
let status = await PrefsTool.run(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
exit(status)
