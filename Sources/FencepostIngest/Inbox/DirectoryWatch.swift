import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Wakes the watcher when something changes in its folders, and says which files were renamed
/// in (complete at once). Linux's inotify; where it is missing, a plain timeout (the folders
/// are looked at again after it either way).
final class DirectoryWatch {
    #if canImport(Glibc)
        private let descriptor: Int32
        /// Watch descriptor → folder.
        private var folders: [Int32: String] = [:]
    #endif

    init(_ directories: [String]) {
        #if canImport(Glibc)
            descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            let mask = UInt32(
                IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_CREATE | IN_MODIFY | IN_DELETE | IN_ATTRIB)
            for directory in directories where descriptor >= 0 {
                let watch = inotify_add_watch(descriptor, directory, mask)
                if watch >= 0 { folders[watch] = directory }
            }
        #endif
    }

    deinit {
        #if canImport(Glibc)
            if descriptor >= 0 { close(descriptor) }
        #endif
    }

    /// Waits until a change is seen or `timeout` seconds pass; returns the files renamed in
    /// (folder, name) meanwhile.
    func wait(timeout: Double) -> [(folder: String, name: String)] {
        #if canImport(Glibc)
            guard descriptor >= 0, !folders.isEmpty else {
                Thread.sleep(forTimeInterval: timeout)
                return []
            }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { return [] }
            return drain()
        #else
            Thread.sleep(forTimeInterval: timeout)
            return []
        #endif
    }

    #if canImport(Glibc)
        /// Reads every queued event: `struct inotify_event` (wd, mask, cookie, len) then `len`
        /// bytes of name, NUL-padded.
        private func drain() -> [(folder: String, name: String)] {
            var renamed: [(folder: String, name: String)] = []
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { return renamed }
                buffer.withUnsafeBytes { bytes in
                    var offset = 0
                    let header = MemoryLayout<inotify_event>.size
                    while offset + header <= count {
                        let watch = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                        let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                        let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                        if mask & UInt32(IN_MOVED_TO) != 0, length > 0, let folder = folders[watch] {
                            let name = bytes[(offset + header)..<(offset + header + length)].prefix { $0 != 0 }
                            renamed.append((folder, String(decoding: name, as: UTF8.self)))
                        }
                        offset += header + length
                    }
                }
            }
        }
    #endif
}
