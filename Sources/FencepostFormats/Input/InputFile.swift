package import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Opens input files with the reasons a shell gives when it cannot: "no such file", "is a
/// directory", "permission denied". Foundation's answers ("The operation could not be
/// completed", error 256 on a directory's first read) leave a user guessing.
package enum InputFile {
    /// A handle on the file at `path`, open for reading.
    package static func open(_ path: String) throws(TraceReadError) -> FileHandle {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw TraceReadError(file: path, line: nil, reason: reason(errno), unreadable: true)
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let failure = errno
            close(descriptor)
            throw TraceReadError(file: path, line: nil, reason: reason(failure), unreadable: true)
        }
        if status.st_mode & S_IFMT == S_IFDIR {
            close(descriptor)
            throw TraceReadError(file: path, line: nil, reason: "is a directory, not a file", unreadable: true)
        }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// The whole file, refused past `limit` bytes (a small document: a configuration, a roster).
    package static func read(_ path: String, limit: Int = 64 << 20) throws(TraceReadError) -> [UInt8] {
        let handle = try open(path)
        var bytes: [UInt8] = []
        while true {
            guard let next = try chunk(of: handle.fileDescriptor, upTo: 1 << 16, name: path) else { return bytes }
            bytes.append(contentsOf: next)
            guard bytes.count <= limit else {
                throw TraceReadError(
                    file: path, line: nil, reason: "larger than \(limit >> 20) MiB: not a file of this kind")
            }
        }
    }

    /// Up to `size` bytes of `descriptor`, read straight into a new array (through `Data` they
    /// were copied once more); nil at the end. One read: a pipe's chunk is what it has.
    package static func chunk(of descriptor: Int32, upTo size: Int, name: String) throws(TraceReadError) -> [UInt8]? {
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = 0
            while true {
                let got = Glibc.read(descriptor, buffer.baseAddress, size)
                if got >= 0 {
                    count = got
                    return
                }
                guard errno == EINTR else {
                    failure = errno
                    return
                }
            }
        }
        guard failure == 0 else {
            throw TraceReadError(file: name, line: nil, reason: "read failed: \(reason(failure))", unreadable: true)
        }
        return bytes.isEmpty ? nil : bytes
    }

    /// The shell's words for an `errno`.
    package static func reason(_ code: Int32) -> String {
        switch code {
        case ENOENT: return "no such file"
        case EACCES, EPERM: return "permission denied"
        case EISDIR: return "is a directory, not a file"
        case ENOTDIR: return "a part of the path is not a directory"
        case ELOOP: return "too many symbolic links"
        case ENAMETOOLONG: return "the name is too long"
        default: return String(cString: strerror(code)).lowercased()
        }
    }
}
