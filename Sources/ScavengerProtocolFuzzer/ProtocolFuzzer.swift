#if SCAVENGER_FUZZ
import CLibFuzzer
#endif
import Foundation
import ScavengerLineCheck

/// libFuzzer's entry: the input is one request line (without its line ending). A broken
/// invariant stops the process, and libFuzzer saves the input as a crash file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        _ = try LineCheck.check(input)
    } catch {
        fatalError("request line invariant broken: \(error)")
    }
    return 0
}

/// A fuzz target over tokenizing and parsing request lines (see `scripts/fuzz.sh`).
///
/// Built with `-D SCAVENGER_FUZZ -sanitize=fuzzer,address`, it is a libFuzzer binary: arguments
/// are libFuzzer's (corpus directories, `-max_total_time=…`). Any other build replays inputs: the
/// arguments are files or directories of files, each one request line, checked with
/// ``LineCheck``; it exits 1 if any breaks an invariant. Both take `--write-seeds DIR` and
/// `--write-dictionary FILE` first, to write a seed corpus and a libFuzzer dictionary made
/// from the command table, and then exit.
///
/// The entry is `@main` in both builds, and the fuzz build hands over to `LLVMFuzzerRunDriver`
/// instead of relying on libFuzzer's own `main`: in a debug build SwiftPM links every executable
/// with `main` aliased to `<module>_main` (so tests can import executables), a symbol that only
/// exists when the module has an entry point of its own (swiftlang/swift-package-manager#8731).
@main
enum ProtocolFuzzer {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "--write-seeds" || arguments.first == "--write-dictionary" {
            exit(writeSeeds(arguments))
        }
        #if SCAVENGER_FUZZ
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOneInput(data, size) })
        #else
        if arguments.isEmpty || arguments.first?.hasPrefix("-") == true {
            FileHandle.standardError.write(Data("""
                usage: ScavengerProtocolFuzzer FILE-OR-DIRECTORY...   replay inputs through the line checks
                       ScavengerProtocolFuzzer --write-seeds DIR [--write-dictionary FILE]
                (built with scripts/fuzz.sh, it is a libFuzzer binary instead)

                """.utf8))
            exit(2)
        }
        exit(replay(arguments))
        #endif
    }

    /// `--write-seeds DIR` and/or `--write-dictionary FILE`.
    static func writeSeeds(_ arguments: [String]) -> Int32 {
        var index = 0
        do {
            while index < arguments.count {
                guard index + 1 < arguments.count else { throw UsageError("\(arguments[index]) needs a path") }
                let path = arguments[index + 1]
                switch arguments[index] {
                case "--write-seeds":
                    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                    let seeds = SeedCorpus.seeds()
                    for (name, bytes) in seeds {
                        try Data(bytes).write(to: URL(fileURLWithPath: path).appendingPathComponent(name))
                    }
                    print("wrote \(seeds.count) seeds to \(path)")
                case "--write-dictionary":
                    try Data(SeedCorpus.dictionary().utf8).write(to: URL(fileURLWithPath: path))
                    print("wrote the dictionary to \(path)")
                default:
                    throw UsageError("unknown option \(arguments[index])")
                }
                index += 2
            }
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            return 2
        }
        return 0
    }

    /// Checks every input file; returns the exit status.
    static func replay(_ paths: [String]) -> Int32 {
        var checked = 0
        var failed = 0
        for path in paths {
            let files: [String]
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                files = names.filter { !$0.hasPrefix(".") }.sorted().map { path + "/" + $0 }
            } else {
                files = [path]
            }
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else {
                    print("FAIL \(file): cannot be read")
                    failed += 1
                    continue
                }
                checked += 1
                do {
                    _ = try LineCheck.check(Array(data))
                } catch {
                    print("FAIL \(file): \(error)")
                    failed += 1
                }
            }
        }
        print("\(checked) inputs checked, \(failed) failed")
        return failed == 0 ? 0 : 1
    }
}

struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
