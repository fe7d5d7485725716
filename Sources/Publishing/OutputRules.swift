import Foundation

/// What the operator lets a room admin's outputs do: file outputs only inside a recordings directory, RTMP only
/// to allowed destinations. The defaults allow any file path and any host but link-local and metadata addresses
/// (an embedding program's choice); `cohost serve` always sets a recordings directory.
public struct OutputRules: Sendable, Equatable {
    public var recordings: RecordingsDirectory?
    public var destinations: DestinationPolicy

    public init(recordings: RecordingsDirectory? = nil, destinations: DestinationPolicy = DestinationPolicy()) {
        self.recordings = recordings
        self.destinations = destinations
    }

    /// Where a file:// URL writes, or why it may not.
    func filePath(_ url: String) -> Result<String, OutputError> {
        guard let recordings else {
            return OutputURL.filePath(url).mapError { _ in
                .invalidURL(url: url, reason: "a file URL needs an absolute path (file:///dir/name.flv)")
            }
        }
        return recordings.path(for: url)
    }
}

/// The one directory file outputs write into, made at start. A file:// URL names a file in it: relative
/// (`file://show.flv`, `file://2026/show.flv`) or absolute inside it; `..`, a path elsewhere, or a directory that
/// is a symbolic link out of it is refused before anything is created.
public struct RecordingsDirectory: Sendable, Equatable {
    /// Absolute, with symbolic links resolved.
    public let path: String
    /// Absolute as configured (links not resolved): systemd's `StateDirectory` with `DynamicUser` is a link, and
    /// operators write URLs with the path they configured.
    public let configuredPath: String
    /// What every recording written into it counts against (`recordings_max_bytes`); nil: no quota.
    public var quota: RecordingQuota?

    public static func == (a: Self, b: Self) -> Bool {
        a.path == b.path && a.configuredPath == b.configuredPath && a.quota === b.quota
    }

    /// Creates the directory (and its parents) when missing.
    public init(creating path: String) throws(OutputRulesError) {
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw OutputRulesError(message: "cannot create the recordings directory \(path): \(error)")
        }
        guard let real = realpath(path, nil) else {
            throw OutputRulesError(message: "cannot resolve the recordings directory \(path)")
        }
        defer { free(real) }
        self.path = String(cString: real)
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        configuredPath = "/" + absolute.split(separator: "/").filter { $0 != "." }.joined(separator: "/")
    }

    /// The file `url` names inside this directory, or why it may not be written.
    func path(for url: String) -> Result<String, OutputError> {
        guard OutputURL.scheme(of: url) == "file", let rest = OutputURL.afterScheme(url) else {
            return .failure(.unsupportedScheme(url: url))
        }
        let raw = OutputURL.text(rest).removingPercentEncodingIfValid
        func refuse(_ why: String) -> Result<String, OutputError> {
            .failure(.forbiddenPath(url: url, reason: "file outputs write only into the recordings directory: \(why)"))
        }
        let scalars = raw.unicodeScalars
        guard !scalars.isEmpty, scalars.last != "/", !scalars.contains("\0"), raw.utf8.count < 1024 else {
            return .failure(.invalidURL(url: url, reason: "a file URL needs a file name (file://name.flv)"))
        }
        // Split on scalars (OutputURL): "../\u{301}x" must show its "..".
        let components = scalars.split(separator: "/").map { OutputURL.text($0) }
        guard !components.contains("..") && !components.contains(".") else { return refuse("'.' or '..' in the path") }
        let relative: [String]
        if scalars.first == "/" {
            let bases = [path, configuredPath].map { base in
                base.unicodeScalars.split(separator: "/").map { OutputURL.text($0) }
            }
            guard
                let base = bases.first(where: {
                    components.count > $0.count && Array(components.prefix($0.count)) == $0
                })
            else { return refuse("the path is outside it") }
            relative = Array(components.dropFirst(base.count))
        } else {
            relative = components
        }
        let file = path + "/" + relative.joined(separator: "/")
        var status = stat()
        guard lstat(file, &status) != 0 else { return refuse("a file of that name exists") }
        // The directory the file goes in must exist and, links resolved, still lie inside.
        let parent = relative.count > 1 ? path + "/" + relative.dropLast().joined(separator: "/") : path
        guard let real = realpath(parent, nil) else { return refuse("its directory does not exist") }
        defer { free(real) }
        let resolved = String(cString: real)
        guard resolved == path || resolved.hasPrefix(path + "/") else { return refuse("a link leads outside it") }
        return .success(file)
    }
}
