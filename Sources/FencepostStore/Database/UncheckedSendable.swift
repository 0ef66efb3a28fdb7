/// A value handed across a task boundary that the caller knows is not shared meanwhile: the
/// task that receives it is awaited (or its result is) before the sender touches it again.
struct UncheckedSendable<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
