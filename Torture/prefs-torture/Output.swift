import Foundation

/// Prints one line to stdout at once, unbuffered: a child's acknowledgement must be out before its next operation
/// starts, and the parent's progress must reach a CI log as it happens.
func say(_ line: String) {
    let data = Array((line + "\n").utf8)
    data.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            guard let base = buffer.baseAddress else { return }
            let written = write(1, base + offset, buffer.count - offset)
            if written < 0 { if errno == EINTR { continue }; return }
            offset += written
        }
    }
}
