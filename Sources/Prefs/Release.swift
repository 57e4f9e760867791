/// This release of Prefs: the one place its version is written.
///
/// `prefs-tool --version` prints it, and a test holds it equal to the latest release heading in CHANGELOG.md.
package enum Release {
    /// The version, as in CHANGELOG.md's heading and the Git tag (`0.2.0`).
    package static let version = "0.2.0"
}
