import Foundation
import Prefs

/// `stores`: the stores in the default location, by bundle identifier, as `defaults domains` lists domains.
enum StoresCommand {
    static let command = Command(
        spec: CommandSpec(
            name: "stores", summary: "List the apps' stores in the default location (defaults domains).",
            usage: "prefs-tool stores [--paths]",
            help: """
                One identifier per line, sorted: the ID that --app ID opens. --paths prints each store's path instead.
                The default location is $XDG_CONFIG_HOME/prefs (~/.config/prefs) on Linux, where an app's store is
                ID.sqlite, and Application Support/ID/prefs.sqlite on Apple platforms. With no store there, prints
                nothing and says so on stderr (exit 0).
                """,
            flags: ["paths"])
    ) { arguments, context in
        let stores = try StoreDirectory.defaultStores(environment: context.environment)
        if stores.isEmpty {
            let sample = try Prefs.Storage.defaultURL(identifier: "ID", environment: context.environment).path
            Terminal.note("no stores in the default location (\(sample))")
        }
        for store in stores { Terminal.printData(arguments.flag("paths") ? store.path : store.identifier) }
        return 0
    }
}
