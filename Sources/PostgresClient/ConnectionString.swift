import CLibPQ
import Foundation

/// A connection string whose secrets we have located, checked before libpq connects with it.
///
/// A string is accepted only when libpq parses it and our own reading finds its password where
/// libpq does. Anything else (a mistyped scheme, an unencoded `@` or `/` in a password, an
/// unknown keyword such as `passwd`, an unquoted space in a conninfo password) is refused
/// without quoting it: a string we cannot read may hold a password anywhere.
public struct ConnectionString: Sendable, CustomStringConvertible {
    /// The text as given; never printed.
    let text: String
    /// The text with every secret replaced by `***`.
    public let redacted: String
    /// libpq's reading, keyword and value, for `PQconnectdbParams`.
    let options: [(keyword: String, value: String)]
    /// Every spelling of every secret, to scrub from libpq's and the server's messages.
    let secrets: [String]

    public var description: String { redacted }

    /// What a message shows instead of a string we refused.
    public static let notShown = "the database (connection string not shown)"

    public init(_ text: String) throws(UnreadableConnectionString) {
        // libpq reads a C string: a NUL would cut the text where our reading goes on.
        guard !text.utf8.contains(0) else { throw UnreadableConnectionString(reason: "it contains a NUL character") }
        let options = try libpqOptions(text)
        let located = try SecretLocator.locate(in: text)
        // Our reading must find the very passwords libpq found.
        for keyword in SecretLocator.secretKeywords {
            let libpqValue = options.first { $0.keyword == keyword }?.value
            guard libpqValue == nil || located.values[keyword] == libpqValue else {
                throw UnreadableConnectionString(reason: "its \(keyword) cannot be located unambiguously")
            }
        }
        self.text = text
        self.redacted = located.redacted
        self.options = options
        self.secrets = located.secrets
    }

    /// `message` with every secret of this string replaced by `***`.
    func scrubbing(_ message: String) -> String {
        var text = message
        for secret in secrets.filter({ !$0.isEmpty }).sorted(by: { $0.count > $1.count }) {
            text = text.replacingOccurrences(of: secret, with: "***")
        }
        return text
    }
}

/// A connection string we refuse; the reason never quotes it.
public struct UnreadableConnectionString: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String {
        "the connection string is not a postgres:// or postgresql:// URL or key=value conninfo that can be read safely: \(reason)"
    }
}

/// `connectionString` with every password replaced by `***`, for logs and error messages; a
/// string that cannot be read safely is not shown at all.
public func redactedConnectionString(_ connectionString: String) -> String {
    (try? ConnectionString(connectionString))?.redacted ?? ConnectionString.notShown
}

/// libpq's reading of `text`: every keyword it set. Its parse errors quote the text, so they
/// are replaced by a description of their kind.
func libpqOptions(_ text: String) throws(UnreadableConnectionString) -> [(keyword: String, value: String)] {
    var errorMessage: UnsafeMutablePointer<CChar>?
    guard let parsed = PQconninfoParse(text, &errorMessage) else {
        let message = errorMessage.map { String(cString: $0) } ?? ""
        PQfreemem(errorMessage)
        throw UnreadableConnectionString(reason: describingParseError(message))
    }
    defer { PQconninfoFree(parsed) }
    var options: [(keyword: String, value: String)] = []
    var option = parsed
    while let keyword = option.pointee.keyword {
        if let value = option.pointee.val { options.append((String(cString: keyword), String(cString: value))) }
        option += 1
    }
    return options
}

/// The kind of a libpq parse error, without the piece of the string it quotes.
private func describingParseError(_ message: String) -> String {
    let kinds: [(prefix: String, description: String)] = [
        ("missing \"=\" after", "a word has no \"=\" after it (a URL must start with postgres:// or postgresql://; a conninfo value with spaces must be quoted)"),
        ("invalid connection option", "it names a keyword libpq does not know"),
        ("unterminated quoted string", "a quoted value is not closed"),
        ("invalid percent-encoded token", "a % is not followed by two hex digits (write % as %25)"),
        ("forbidden value %00", "it holds %00"),
        ("extra key/value separator", "a query parameter has more than one \"=\""),
        ("missing key/value separator", "a query parameter has no \"=\""),
        ("invalid URI query parameter", "a query parameter names a keyword libpq does not know"),
        ("unexpected character", "the host is followed by something other than a port or a path"),
        ("end of string reached when looking for matching \"]\"", "an IPv6 address has no closing ]"),
        ("IPv6 host address may not be empty", "an IPv6 address is empty"),
        ("connection info string size exceeds", "it is too long"),
    ]
    return kinds.first { message.hasPrefix($0.prefix) }?.description ?? "libpq cannot parse it"
}
