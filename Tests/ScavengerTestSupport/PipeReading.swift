import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Everything a pipe gives until its writers close it. Foundation's `readDataToEndOfFile()`
/// stops the whole test process when a read is interrupted by a signal (`EINTR`, which a
/// child's exit elsewhere in a parallel run can cause: a fresh-clone run crashed so); this
/// reads again instead.
public func readToEnd(_ handle: FileHandle) -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
        if count > 0 {
            data.append(contentsOf: buffer[0 ..< count])
        } else if count < 0, errno == EINTR {
            continue
        } else {
            return data
        }
    }
}
