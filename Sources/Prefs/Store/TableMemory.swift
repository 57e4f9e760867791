#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The block of memory a ``NameTable`` keeps its buckets in, which grows without holding an old and a new table at once.
///
/// A table that doubled by allocating the larger one and moving its buckets over held both for a moment: 1.5 times
/// the new table (12 MiB for a 100,000-key cache, whose table is 8 MiB), at the moment a store grows. Here the block
/// grows by `realloc`, which grows a block in place where it can, and moves the pages of one malloc maps (glibc maps
/// blocks from 128 KiB, and moves them with `mremap`) instead of copying them: growing holds the new table alone. The
/// table then moves its buckets within the block (``NameTable``'s in-place rehash).
///
/// `realloc` keeps malloc's 16-byte alignment only, and the buckets start at a cache line (a 64-byte bucket in one
/// line): the block holds 64 bytes more than the buckets, which start at its first cache line, and when a grown block's
/// first line is not where they were, they move within it (a large block keeps its offset in its first page, so that
/// is the rare case of a small one).
///
/// The bytes move as they are: a table holds only bitwise-takable values (``NameTable`` checks when it is made).
struct TableMemory {
    /// The block as malloc gave it.
    let block: UnsafeMutableRawPointer
    /// Where the buckets start: the block's first cache line.
    let base: UnsafeMutableRawPointer
    /// The buckets' bytes from ``base``.
    let byteCount: Int

    /// The buckets' alignment: a cache line.
    static let alignment = 64

    /// `byteCount` bytes at a cache line's start, every one zero.
    static func allocate(byteCount: Int) -> TableMemory {
        guard let block = malloc(byteCount + alignment) else { outOfMemory(byteCount) }
        let base = aligned(block)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        return TableMemory(block: block, base: base, byteCount: byteCount)
    }

    /// The memory grown to `newByteCount` bytes (more than ``byteCount``): its first ``byteCount`` bytes as they were,
    /// possibly at a new address, and the rest zero. `self` is no longer to be used.
    func grown(to newByteCount: Int) -> TableMemory {
        let offset = base - block
        guard let block = realloc(block, newByteCount + Self.alignment) else { Self.outOfMemory(newByteCount) }
        let base = Self.aligned(block)
        if base != block + offset { base.copyMemory(from: UnsafeRawPointer(block + offset), byteCount: byteCount) }  // memmove
        (base + byteCount).initializeMemory(as: UInt8.self, repeating: 0, count: newByteCount - byteCount)
        return TableMemory(block: block, base: base, byteCount: newByteCount)
    }

    /// Gives the block back.
    func release() {
        free(block)
    }

    private static func aligned(_ block: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
        block.alignedUp(toMultipleOf: alignment)
    }

    /// As Swift's own allocations do when malloc fails.
    private static func outOfMemory(_ byteCount: Int) -> Never {
        fatalError("out of memory: a table of \(byteCount) bytes")
    }
}
