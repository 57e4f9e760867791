#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether this process runs under ThreadSanitizer or AddressSanitizer (`swift test --sanitize=…`), whose runtimes
/// map shadow memory before `main`: a child built in the same run carries the same runtime, so a memory bound on it
/// must leave room for that.
package enum Sanitizer {
    package static let isActive: Bool = {
        let program = dlopen(nil, RTLD_NOW)
        let runtimes: [String] = ["__tsan_init", "__asan_init"]
        return runtimes.contains { dlsym(program, $0) != nil }
    }()
}
