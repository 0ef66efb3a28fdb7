import NIOCore

/// Frames inbound bytes into packets, refusing one past `maximumSize` bytes (the connection is
/// then closed with the reason).
struct MQTTPacketDecoder: ByteToMessageDecoder {
    typealias InboundOut = MQTTPacket
    let maximumSize: Int

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let packet = try MQTTPacket.read(from: &buffer, maximumSize: maximumSize) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(packet))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}

/// Writes outbound packets as bytes.
struct MQTTPacketEncoder: MessageToByteEncoder {
    typealias OutboundIn = MQTTPacket

    func encode(data: MQTTPacket, out: inout ByteBuffer) throws {
        data.write(to: &out)
    }
}
