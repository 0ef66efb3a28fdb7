import Foundation

/// The NATS server with JetStream tools/test starts (tools/nats) and names in
/// FENCEPOST_TEST_NATS (`nats://127.0.0.1:PORT`), and the Python with nats-py
/// (FENCEPOST_TEST_PYTHON) that reads what reached it: tests never read it with our client.
/// Tests that need them are skipped when they are not set.
package enum TestNATS {
    package static var url: String? { ProcessInfo.processInfo.environment["FENCEPOST_TEST_NATS"] }
    package static var available: Bool { url != nil && TestBroker.python != nil }

    /// Every message of `stream`, in the stream's order, read with nats-py: subject, the
    /// `Nats-Msg-Id` header and the event's id and device.
    package static func messages(_ url: String, stream: String) async throws -> [(
        subject: String, messageID: String, eventID: String, device: String
    )] {
        let script = """
            import asyncio, json, sys, nats
            async def main():
                nc = await nats.connect(sys.argv[1])
                js = nc.jetstream()
                info = await js.stream_info(sys.argv[2])
                out = []
                if info.state.messages:
                    for seq in range(info.state.first_seq, info.state.last_seq + 1):
                        m = await js.get_msg(sys.argv[2], seq)
                        event = json.loads(m.data)
                        out.append([m.subject, (m.headers or {}).get("Nats-Msg-Id", ""), event["id"], event["device"]])
                print(json.dumps(out))
                await nc.close()
            asyncio.run(main())
            """
        let python =
            try TestBroker.python
            ?? {
                throw TestRedis.ToolFailure(
                    command: "python", status: -1, standardError: "FENCEPOST_TEST_PYTHON is not set")
            }()
        let text = try await TestRedis.run(python, ["-c", script, url, stream])
        guard let rows = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String]] else {
            throw TestRedis.ToolFailure(command: "nats-py", status: 0, standardError: "not a list of lists: \(text)")
        }
        return rows.map { ($0[0], $0[1], $0[2], $0[3]) }
    }

    /// Runs `tools/nats ARGUMENTS...` and returns its standard output without the final newline.
    @discardableResult
    package static func tool(_ arguments: [String]) async throws -> String {
        try await TestRedis.run(TestData.packageRoot.appendingPathComponent("tools/nats").path, arguments)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether something accepts connections at `url`'s port on 127.0.0.1.
    package static func listening(_ url: String) async -> Bool {
        guard let port = URLComponents(string: url)?.port else { return false }
        return
            (try? await TestRedis.run(
                "/usr/bin/python3",
                ["-c", "import socket; socket.create_connection(('127.0.0.1', \(port)), 0.5).close()"])) != nil
    }
}
