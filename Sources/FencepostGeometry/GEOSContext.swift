import CGEOS

/// One GEOS context handle: the thread-confined state every GEOS call needs.
///
/// GEOS contexts are not thread-safe, so this class is deliberately not `Sendable`: an owner
/// (a monitor, a validator, an actor) makes one and keeps every geometry made from it on the
/// same thread. Every wrapper made from a context keeps it alive with a strong reference.
public final class GEOSContext {
    let handle: GEOSContextHandle_t
    private let messages: MessageBox

    /// The most recent error GEOS reported on this context, if any.
    public var lastError: String? { messages.lastError }

    /// Creates a context and routes GEOS's error messages into `lastError`.
    public init() {
        guard let handle = GEOS_init_r() else {
            preconditionFailure("GEOS_init_r returned no context: out of memory")
        }
        self.handle = handle
        self.messages = MessageBox()
        let box = Unmanaged.passUnretained(messages).toOpaque()
        GEOSContext_setErrorMessageHandler_r(
            handle,
            { message, userdata in
                guard let message, let userdata else { return }
                Unmanaged<MessageBox>.fromOpaque(userdata).takeUnretainedValue().lastError = String(cString: message)
            }, box)
    }

    deinit {
        GEOS_finish_r(handle)
    }

    /// Forgets the last error, so the next failure reports its own message.
    func clearError() {
        messages.lastError = nil
    }

    /// The error to throw after a GEOS call failed: GEOS's own message when it gave one.
    func failure(_ operation: String) -> GeometryError {
        GeometryError.geosFailure(operation: operation, message: lastError ?? "no message from GEOS")
    }

    /// Takes ownership of a string GEOS allocated, frees it with `GEOSFree_r` and returns a copy.
    func takeString(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        defer { GEOSFree_r(handle, pointer) }
        return String(cString: pointer)
    }
}

/// Where the C error handler writes; owned by its context, which outlives every call.
private final class MessageBox {
    var lastError: String?
}
