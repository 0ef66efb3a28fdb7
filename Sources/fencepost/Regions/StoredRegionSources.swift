import FencepostCore
import FencepostStore

/// The store, when there is one, and the fingerprints of the feature texts its regions were
/// last applied from: what `plan` and `apply` recognise unchanged features by.
struct StoredRegionSources {
    /// Nil when no store has been made yet.
    var store: Store?
    var sources: RegionSourceIndex

    /// Nil when the store is there but cannot be opened or read: the command then goes the way
    /// it always went (the config read first, its problems reported before the store's), and
    /// says nothing here.
    init?(_ options: StoreOptions) async {
        do {
            store = try await Store.open(options.path, busyTimeout: options.busyTimeout, createIfMissing: false)
        } catch StoreOpenError.missing {
            store = nil
        } catch {
            return nil
        }
        do {
            sources = try await store?.regionSources() ?? RegionSourceIndex()
        } catch {
            return nil
        }
    }
}
