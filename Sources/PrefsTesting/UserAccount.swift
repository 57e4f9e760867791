import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The user and group ids of the local account `name`, from the user database; nil when there is no such account.
///
/// Reentrant (`getpwnam_r`): `getpwnam` answers in a buffer every thread of the process shares, so a test looking up
/// one account while another test looks up another could read the other's ids. Parallel tests do: the test server's
/// folder, given to `postgres` while a test looked up `prefs-mallory`, was once left unwritable to its server.
///
/// ```swift
/// let postgres = try #require(accountIDs(named: "postgres"))
/// chown(path, postgres.uid, postgres.gid)
/// ```
package func accountIDs(named name: String) -> (uid: uid_t, gid: gid_t)? {
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 16_384)
    guard getpwnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
    return (entry.pw_uid, entry.pw_gid)
}
