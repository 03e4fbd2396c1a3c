import Foundation
import NIOCore
import ScavengerProtocol
import ScavengerServer
import ScavengerTestSupport
import Synchronization
import Testing

@Suite("Framing and connection commands over TCP")
struct FramingTests {
    @Test("PING, HELLO, HELP, QUIT")
    func connectionCommands() async throws {
        try await withServer { address, _ in
            let lines = try await transcript(address, "PING\nHELLO\nHELP PING\nQUIT\nPING\n")
            #expect(lines == [
                #"OK "PONG""#,
                #"OK {"server":"scavengerd","version":"\#(ServerVersion.daemon)","protocol":1,"user":null}"#,
                #"OK {"command":"PING","syntax":"PING","summary":"Answers \"PONG\".","flags":["readonly"]}"#,
                #"OK "BYE""#,
            ])
        }
    }

    @Test("QUIT closes the connection even when the client keeps it open")
    func quitCloses() async throws {
        try await withServer { address, _ in
            try await withTimeout {
                try await TestConnection.talk(address) { writer, reader in
                    try await writer.send("QUIT\n")
                    #expect(try await reader.next() == #"OK "BYE""#)
                    #expect(try await reader.next() == nil)
                }
            }
        }
    }

    @Test("blank lines get no reply; CRLF is accepted; case does not matter")
    func blankAndCRLF() async throws {
        try await withServer { address, _ in
            let lines = try await transcript(address, "\n\r\n   \n\t\nping\r\nPiNg\n\r\n")
            #expect(lines == [#"OK "PONG""#, #"OK "PONG""#])
        }
    }

    @Test("invalid UTF-8 gets BAD_REQUEST and the connection goes on")
    func invalidUTF8() async throws {
        try await withServer { address, _ in
            let lines = try await TestConnection.talk(address) { writer, reader in
                try await writer.send(bytes: [0x50, 0x49, 0xFF, 0xFE, 0x0A] + Array("PING\n".utf8) + [0xC3, 0x28, 0x0A])
                writer.finish()
                return try await reader.rest()
            }
            #expect(lines.count == 3)
            #expect(lines[0].hasPrefix("ERR BAD_REQUEST "))
            #expect(lines[1] == #"OK "PONG""#)
            #expect(lines[2].hasPrefix("ERR BAD_REQUEST "))
        }
    }

    @Test("quoted tokens and errors come back on one line each")
    func quotedTokens() async throws {
        try await withServer { address, _ in
            let lines = try await transcript(address, #"HELP "ping""# + "\n" + #"HELP "unterminated"# + "\nHELP \"\\u0000\"\nNOPE\u{7}\n")
            #expect(lines.count == 4)
            #expect(lines[0].hasPrefix("OK {\"command\":\"PING\""))
            #expect(lines[1] == "ERR BAD_REQUEST unterminated quoted token")
            #expect(lines[2].hasPrefix("ERR UNKNOWN_COMMAND "))
            #expect(lines[3].hasPrefix("ERR UNKNOWN_COMMAND "))
        }
    }

    @Test("1,000 pipelined commands are answered in order")
    func pipelining() async throws {
        try await withServer { address, _ in
            let request = (0 ..< 1000).map { index in
                index % 2 == 0 ? "PING\n" : "HELP \(index % 4 == 1 ? "ping" : "quit")\n"
            }.joined()
            let lines = try await withTimeout { try await transcript(address, request) }
            #expect(lines.count == 1000)
            for (index, line) in lines.enumerated() {
                if index % 2 == 0 {
                    #expect(line == #"OK "PONG""#)
                } else {
                    #expect(line.hasPrefix(#"OK {"command":"\#(index % 4 == 1 ? "PING" : "QUIT")""#))
                }
            }
        }
    }

    /// The standard table plus ECHO, answered after a short await like a database command.
    static let deferredTable = CommandTable(CommandTable.standard.commands + [
        CommandSpec(
            "ECHO", arity: 1 ... 1, syntax: "ECHO word", summary: "Answers the word after a short wait (tests only).",
            parse: { arguments in try arguments.required("word").text },
            execute: { word, _ in
                try await Task.sleep(for: .milliseconds(Int.random(in: 0 ... 2)))
                return CommandOutcome(.ok(.string(word)))
            }),
    ])

    @Test(
        "replies keep the order of requests when awaited and in-memory commands interleave",
        arguments: [10, 300])
    func orderAcrossDeferred(count: Int) async throws {
        try await withServer(table: Self.deferredTable) { address, _ in
            // Long runs of PING behind each ECHO fill the queue past the point where reading stops.
            let request = (0 ..< count).map { index in
                index % 100 == 0 ? "ECHO w\(index)\n" + String(repeating: "PING\n", count: 150) : "ECHO w\(index)\nHELP ping\n"
            }.joined()
            let expected = (0 ..< count).flatMap { index -> [String] in
                let echo = #"OK "w\#(index)""#
                if index % 100 == 0 { return [echo] + Array(repeating: #"OK "PONG""#, count: 150) }
                return [echo, #"OK {"command":"PING","syntax":"PING","summary":"Answers \"PONG\".","flags":["readonly"]}"#]
            }
            let lines = try await withTimeout { try await transcript(address, request) }
            #expect(lines == expected)
        }
    }

    @Test("a line at the limit is served; one byte more is LINE_TOO_LONG, then close")
    func lineLimit() async throws {
        let configuration = ServerConfiguration(limits: ProtocolLimits(maxLineBytes: 1024))
        try await withServer(configuration) { address, _ in
            let atLimit = "HELP " + String(repeating: "x", count: 1024 - 5)
            let fits = try await transcript(address, atLimit + "\r\nPING\n")
            #expect(fits.count == 2)
            #expect(fits[0].hasPrefix("ERR UNKNOWN_COMMAND "))
            #expect(fits[1] == #"OK "PONG""#)

            let over = try await transcript(address, "PING\n" + atLimit + "x\nPING\n")
            #expect(over.count == 2)
            #expect(over[0] == #"OK "PONG""#)
            #expect(over[1].hasPrefix("ERR LINE_TOO_LONG "))
        }
    }

    @Test("a 100 MiB line gets LINE_TOO_LONG while other connections keep working")
    func hugeLine() async throws {
        try await withServer { address, _ in
            try await withTimeout(120) {
                let reply = try await TestConnection.talk(address) { writer, reader -> String? in
                    let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
                    // The server stops reading once it has answered; writes may then fail.
                    do {
                        for _ in 0 ..< 100 { try await writer.send(bytes: chunk) }
                        try await writer.send("\n")
                    } catch {}
                    return try await reader.next()
                }
                #expect(reply?.hasPrefix("ERR LINE_TOO_LONG ") == true)
                #expect(try await transcript(address, "PING\n") == [#"OK "PONG""#])
            }
        }
    }

    @Test("a client that sends half a line and waits does not hold up others")
    func halfLine() async throws {
        try await withServer { address, _ in
            try await withTimeout {
                try await TestConnection.talk(address) { slow, slowReader in
                    try await slow.send("PI")
                    #expect(try await transcript(address, "PING\n") == [#"OK "PONG""#])
                    try await slow.send("NG\n")
                    #expect(try await slowReader.next() == #"OK "PONG""#)
                }
            }
        }
    }

    @Test("binary garbage gets an error per line and hurts nobody")
    func garbage() async throws {
        try await withServer { address, _ in
            var generator = SystemRandomNumberGenerator()
            let garbage = (0 ..< 64 * 1024).map { _ in UInt8.random(in: 0 ... 255, using: &generator) }
            let lines = try await withTimeout {
                try await TestConnection.talk(address) { writer, reader in
                    try await writer.send(bytes: garbage + Array("\nPING\n".utf8))
                    writer.finish()
                    return try await reader.rest()
                }
            }
            #expect(lines.last == #"OK "PONG""#)
            for line in lines.dropLast() {
                #expect(line.hasPrefix("ERR ") || line.hasPrefix("OK "), "\(line.prefix(60))")
            }
            #expect(try await transcript(address, "PING\n") == [#"OK "PONG""#])
        }
    }

    @Test("connections over the limit are refused with UNAVAILABLE")
    func connectionLimit() async throws {
        let configuration = ServerConfiguration(maxConnections: 2)
        try await withServer(configuration) { address, _ in
            try await withTimeout {
                try await TestConnection.talk(address) { _, first in
                    try await TestConnection.talk(address) { second, secondReader in
                        try await second.send("PING\n")
                        #expect(try await secondReader.next() == #"OK "PONG""#)
                        let refused = try await transcript(address, "PING\n")
                        #expect(refused.count == 1)
                        #expect(refused.first?.hasPrefix("ERR UNAVAILABLE ") == true)
                    }
                    _ = first
                }
            }
        }
    }

    @Test("connections over the per-address limit are refused with UNAVAILABLE; a closed one frees its place")
    func perAddressLimit() async throws {
        let configuration = ServerConfiguration(maxConnections: 100, maxConnectionsPerAddress: 2)
        try await withServer(configuration) { address, _ in
            try await withTimeout(90) {
                try await TestConnection.talk(address) { first, firstReader in
                    try await first.send("PING\n")
                    #expect(try await firstReader.next() == #"OK "PONG""#)
                    try await TestConnection.talk(address) { second, secondReader in
                        try await second.send("PING\n")
                        #expect(try await secondReader.next() == #"OK "PONG""#)
                        for _ in 0 ..< 5 {
                            let refused = try await transcript(address, "PING\n")
                            #expect(refused.count == 1)
                            #expect(refused.first?.hasPrefix("ERR UNAVAILABLE too many connections from your address") == true)
                        }
                    }
                }
                // Both places are free again (a closed connection leaves the registry as it closes).
                try await eventually("a new connection is served") { try await transcript(address, "PING\n") == [#"OK "PONG""#] }
            }
        }
    }

    @Test("a client trickling a line byte by byte is cut off at the line deadline")
    func slowLine() async throws {
        // No idle timeout: the line deadline is the only thing that can end this connection.
        let configuration = ServerConfiguration(idleTimeoutSeconds: 0, lineTimeoutSeconds: 1)
        try await withServer(configuration) { address, _ in
            try await withTimeout {
                try await TestConnection.talk(address) { writer, reader in
                    // Whole lines, slowly, are fine: the deadline runs per line (these pauses add up
                    // to more than it; a slow machine only makes them longer).
                    for _ in 0 ..< 3 {
                        try await writer.send("PING\n")
                        #expect(try await reader.next() == #"OK "PONG""#)
                        try await Task.sleep(for: .milliseconds(600))
                    }
                    // One byte every 200 ms for as long as the connection lasts, never finishing
                    // the line: only the deadline can end it, so the ERR coming at all is the proof.
                    let trickle = Task {
                        while !Task.isCancelled {
                            try await writer.send(bytes: [UInt8(ascii: "x")])
                            try await Task.sleep(for: .milliseconds(200))
                        }
                    }
                    #expect(try await reader.next() == "ERR BAD_REQUEST request line not finished within 1 s; closing")
                    #expect(try await reader.next() == nil)
                    trickle.cancel()
                }
            }
        }
    }

    @Test("an idle connection is closed after the idle timeout")
    func idleTimeout() async throws {
        let configuration = ServerConfiguration(idleTimeoutSeconds: 1)
        try await withServer(configuration) { address, _ in
            try await withTimeout {
                let line = try await TestConnection.talk(address) { _, reader in try await reader.next() }
                #expect(line == nil)
            }
        }
    }
}

@Suite("Line framing")
struct LineFramingTests {
    @Test("after a big line, the bytes that follow it get a buffer of their own size")
    func readBufferShrinks() {
        let allocator = ByteBufferAllocator()
        var buffer = allocator.buffer(capacity: 8 * 1024 * 1024)
        buffer.writeBytes([UInt8](repeating: UInt8(ascii: "x"), count: 8 * 1024 * 1024 - 2))
        buffer.writeString("\nPI")
        _ = buffer.readSlice(length: 8 * 1024 * 1024 - 1)
        LineFramer.shrinkIfOversized(&buffer, allocator: allocator)
        #expect(buffer.capacity <= LineFramer.keptBufferCapacity)
        #expect(buffer.readableBytesView.elementsEqual("PI".utf8))
        // A small buffer, or a big one still mostly full, is left as it is.
        var small = allocator.buffer(string: "PING\nPI")
        _ = small.readSlice(length: 5)
        let before = small.capacity
        LineFramer.shrinkIfOversized(&small, allocator: allocator)
        #expect(small.capacity == before)
    }
}
