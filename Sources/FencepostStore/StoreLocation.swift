/// Where the database lives when no `--db` is given.
public enum StoreLocation {
    /// `$FENCEPOST_DB`, else `$XDG_DATA_HOME/fencepost/fencepost.db`, else
    /// `~/.local/share/fencepost/fencepost.db`.
    public static func defaultPath(environment: [String: String]) -> String {
        if let path = environment["FENCEPOST_DB"], !path.isEmpty { return path }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/fencepost/fencepost.db" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "."
        return home + "/.local/share/fencepost/fencepost.db"
    }
}
