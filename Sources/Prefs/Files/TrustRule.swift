import Foundation
import PrefsSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one rule every folder, link and file on the way to a store or an export must pass, as OpenSSH's `safe_path()`
/// applies it to `authorized_keys`: what another local user could change is not used, since they, not this user,
/// would then choose which file is read or written (as root: any file).
///
/// - A **folder** is owned by root or this user, and no other user can write it: not writable by others, nor by its
///   group unless that group is its owner's private group (only that user in it, as Debian and Ubuntu make one for
///   each user). A folder that others can write is accepted only when it is sticky (`/tmp`): it is then *shared*.
/// - An **entry of a shared folder** (a folder, a link or a file in it) is owned by root or this user: in a sticky
///   folder only an entry's owner can rename or remove it, so no other user can change those; anyone can plant others.
/// - A **symbolic link** is followed only when root or this user owns it.
///
/// ``Directory`` applies it to each component as it resolves a path, on the status of what it opened (`fstat`), never
/// on a second lookup of the name.
enum TrustRule {
    /// Whether root or this process's effective user owns a file: the only owners trusted.
    static func isTrusted(owner: uid_t) -> Bool {
        owner == 0 || owner == geteuid()
    }

    /// Throws unless the folder `info` describes passes the rule; returns whether it is shared (sticky and writable
    /// by others), so that its entries must pass ``checkEntry(_:inShared:path:)``.
    static func checkFolder(_ info: stat, path: String) throws(PrefsError) -> Bool {
        guard isTrusted(owner: info.st_uid) else {
            throw .untrustedFolder(path: path, owner: UInt32(info.st_uid), mode: UInt32(info.st_mode & 0o7777))
        }
        let othersWrite = info.st_mode & S_IWOTH != 0
        // Whether the group is a private one matters only when others may not write anyway (asking may read the whole
        // user database: not for `/tmp` on every store's open).
        let groupWrites = !othersWrite && info.st_mode & S_IWGRP != 0 && !PrivateGroups.isPrivate(group: info.st_gid, of: info.st_uid)
        guard othersWrite || groupWrites else { return false }
        guard info.st_mode & S_ISVTX != 0 else {
            throw .untrustedFolder(path: path, owner: UInt32(info.st_uid), mode: UInt32(info.st_mode & 0o7777))
        }
        return true
    }

    /// Throws when the entry `info` describes (not followed) lies in a shared folder and another user owns it:
    /// ``PrefsError/untrustedLink(path:owner:)`` for a link, ``PrefsError/untrustedFolder(path:owner:mode:)`` for a
    /// folder, ``PrefsError/untrustedFile(path:owner:)`` for anything else.
    static func checkEntry(_ info: stat, inShared shared: Bool, path: String) throws(PrefsError) {
        guard shared, !isTrusted(owner: info.st_uid) else { return }
        switch info.st_mode & S_IFMT {
        case S_IFLNK: throw .untrustedLink(path: path, owner: UInt32(info.st_uid))
        case S_IFDIR: throw .untrustedFolder(path: path, owner: UInt32(info.st_uid), mode: UInt32(info.st_mode & 0o7777))
        default: throw .untrustedFile(path: path, owner: UInt32(info.st_uid))
        }
    }

    /// Throws unless the link `info` describes may be followed: root or this user owns it.
    static func checkLink(_ info: stat, path: String) throws(PrefsError) {
        guard isTrusted(owner: info.st_uid) else { throw .untrustedLink(path: path, owner: UInt32(info.st_uid)) }
    }
}

/// Which groups are one user's private group, for a folder its group can write (umask 002, the default for users of
/// Debian and Ubuntu): harmless when that group holds its owner alone, as OpenSSH's Debian patch
/// (`user-group-modes`) rules. Answers are kept for the process's life, since asking may enumerate the user database.
enum PrivateGroups {
    private static let known = Locked<[UInt64: Bool]>([:])

    /// Whether `group` is `owner`'s primary group, lists no member but `owner`, and is no other user's primary group.
    static func isPrivate(group: gid_t, of owner: uid_t) -> Bool {
        let key = UInt64(group) << 32 | UInt64(owner)
        if let answer = known.withLock({ $0[key] }) { return answer }
        let answer = ask(group: group, owner: owner)
        known.withLock { $0[key] = answer }
        return answer
    }

    private static func ask(group: gid_t, owner: uid_t) -> Bool {
        var buffer = [CChar](repeating: 0, count: 65_536)
        var user = passwd()
        var userResult: UnsafeMutablePointer<passwd>?
        guard getpwuid_r(owner, &user, &buffer, buffer.count, &userResult) == 0, userResult != nil, user.pw_gid == group,
            let ownerName = user.pw_name.map({ String(cString: $0) })
        else { return false }
        var entry = GroupEntry()
        var groupResult: UnsafeMutablePointer<GroupEntry>?
        var groupBuffer = [CChar](repeating: 0, count: 65_536)
        guard getgrgid_r(group, &entry, &groupBuffer, groupBuffer.count, &groupResult) == 0, groupResult != nil else { return false }
        var member = entry.gr_mem
        while let name = member?.pointee {
            if String(cString: name) != ownerName { return false }
            member = member?.advanced(by: 1)
        }
        // No other user has it as primary group (the user database enumerated once, under one lock: getpwent is not
        // reentrant).
        return enumeration.withLock { _ in
            setpwent()
            defer { endpwent() }
            while let other = getpwent() {
                if other.pointee.pw_gid == group, other.pointee.pw_uid != owner { return false }
            }
            return true
        }
    }

    private static let enumeration = Locked<Void>(())
}

/// Users' names, for messages that name the owner of a file (`getpwuid_r`).
enum UserNames {
    /// The login name of `uid`; nil when the user database has none.
    static func name(of uid: UInt32) -> String? {
        var buffer = [CChar](repeating: 0, count: 16_384)
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        guard getpwuid_r(uid_t(uid), &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name else { return nil }
        let text = String(cString: name)
        return text.isEmpty ? nil : text
    }

    /// `"; its owner is NAME"`, or nothing when `uid` has no name.
    static func ownerClause(_ uid: UInt32) -> String {
        name(of: uid).map { "; its owner is \($0)" } ?? ""
    }
}

#if canImport(Glibc)
private typealias GroupEntry = Glibc.group
#elseif canImport(Darwin)
private typealias GroupEntry = Darwin.group
#endif
