import Foundation

/// Finds the secrets of a connection string libpq has parsed, in both forms libpq accepts:
/// - URLs: `postgres://user:SECRET@host/db` and the `?password=SECRET` query parameter;
/// - key=value conninfo: `password=SECRET`, `password = 'SE CR\'ET'`, and a `dbname` value that
///   is itself a connection string.
/// Where a URL could hide a piece of a password outside its userinfo, it refuses instead.
enum SecretLocator {
    /// libpq keywords whose values are secrets.
    static let secretKeywords = ["password", "sslpassword"]

    struct Located {
        var redacted: String
        /// Every spelling of every secret (raw and decoded).
        var secrets: [String]
        /// The decoded value of each secret keyword, the last one when repeated (as libpq does).
        var values: [String: String]
    }

    /// Works on Unicode scalars, as libpq's byte-wise parser sees them (a Character may join a
    /// quote or a space to what follows it).
    static func locate(in text: String) throws(UnreadableConnectionString) -> Located {
        let scalars = text.unicodeScalars
        let spans = if let authorityStart = urlAuthorityStart(text) {
            try secretSpans(inURL: scalars, authorityStart: authorityStart)
        } else {
            try secretSpans(inConninfo: scalars)
        }
        var redacted = scalars
        for span in spans.reversed() {
            redacted.replaceSubrange(span.range, with: span.replacement.unicodeScalars)
        }
        var values: [String: String] = [:]
        for span in spans {
            if let keyword = span.keyword { values[keyword] = span.value }
        }
        return Located(redacted: String(redacted), secrets: spans.flatMap(\.secrets), values: values)
    }

    private static func urlAuthorityStart(_ text: String) -> String.Index? {
        for scheme in ["postgresql://", "postgres://"] where text.hasPrefix(scheme) {
            return text.unicodeScalars.index(text.startIndex, offsetBy: scheme.unicodeScalars.count)
        }
        return nil
    }

    /// A piece of a connection string that holds a secret, and what to show instead.
    private struct SecretSpan {
        var range: Range<String.Index>
        var replacement = "***"
        /// The secret keyword this is the value of; nil for a nested connection string.
        var keyword: String?
        /// The value as libpq reads it (percent-decoded, unescaped).
        var value: String
        var secrets: [String]

        init(range: Range<String.Index>, in text: String.UnicodeScalarView, keyword: String?, value: String) {
            self.range = range
            self.keyword = keyword
            self.value = value
            self.secrets = [String(text[range]), value]
        }
    }

    /// As libpq reads a URL:
    /// 1. The userinfo ends at the first `@` before the first `/`; the password is everything
    ///    after the first `:` of the userinfo.
    /// 2. Any other `@` means a password was not percent-encoded and libpq would read part of it
    ///    as the host or the database name: refused. So is a user, host, port or database name
    ///    that no real one looks like (`u:pw` missing its `@host` reads as host `u`, port `pw`).
    /// 3. A secret keyword in the query (`?password=…`, keys percent-decoded as libpq does) is
    ///    redacted too.
    private static func secretSpans(inURL url: String.UnicodeScalarView, authorityStart: String.Index) throws(UnreadableConnectionString) -> [SecretSpan] {
        var spans: [SecretSpan] = []
        var rest = authorityStart
        let userinfoEnd = url[authorityStart...].firstIndex { $0 == "@" || $0 == "/" }
        if let at = userinfoEnd, url[at] == "@" {
            let colon = url[authorityStart..<at].firstIndex(of: ":")
            let user = url[authorityStart..<(colon ?? at)]
            guard isPlainName(user) else {
                throw UnreadableConnectionString(reason: "the user name holds characters to percent-encode")
            }
            if let colon {
                let range = url.index(after: colon)..<at
                spans.append(SecretSpan(range: range, in: url, keyword: "password", value: percentDecoded(url[range])))
            }
            rest = url.index(after: at)
        }
        guard !url[rest...].contains("@") else {
            throw UnreadableConnectionString(reason: "an @ follows the user:password part (percent-encode @ in a password as %40, / as %2F)")
        }
        let hostsEnd = url[rest...].firstIndex { $0 == "/" || $0 == "?" } ?? url.endIndex
        guard url[rest..<hostsEnd].split(separator: ",", omittingEmptySubsequences: false).allSatisfy(isPlainHost) else {
            throw UnreadableConnectionString(reason: "a host is not a host name or address followed by a numeric port (a user:password part must end with @host)")
        }
        let pathEnd = url[hostsEnd...].firstIndex(of: "?") ?? url.endIndex
        if hostsEnd < pathEnd, !isPlainName(url[url.index(after: hostsEnd)..<pathEnd]) {
            throw UnreadableConnectionString(reason: "the database name holds characters to percent-encode (or a user:password part does not end with @host)")
        }
        guard let question = url[rest...].firstIndex(of: "?") else { return spans }
        var parameterStart = url.index(after: question)
        while parameterStart < url.endIndex {
            let parameterEnd = url[parameterStart...].firstIndex(of: "&") ?? url.endIndex
            if let equals = url[parameterStart..<parameterEnd].firstIndex(of: "="),
               case let keyword = percentDecoded(url[parameterStart..<equals]), secretKeywords.contains(keyword) {
                let range = url.index(after: equals)..<parameterEnd
                spans.append(SecretSpan(range: range, in: url, keyword: keyword, value: percentDecoded(url[range])))
            }
            parameterStart = parameterEnd < url.endIndex ? url.index(after: parameterEnd) : parameterEnd
        }
        return spans
    }

    /// Walks `keyword = value` pairs the way libpq's conninfo parser does: values are either bare
    /// (ending at whitespace) or single-quoted, with backslash escaping the next character.
    private static func secretSpans(inConninfo conninfo: String.UnicodeScalarView) throws(UnreadableConnectionString) -> [SecretSpan] {
        var spans: [SecretSpan] = []
        var index = conninfo.startIndex
        func skipWhitespace() {
            while index < conninfo.endIndex, isLibpqSpace(conninfo[index]) { index = conninfo.index(after: index) }
        }
        while true {
            skipWhitespace()
            guard index < conninfo.endIndex else { break }
            let keywordStart = index
            while index < conninfo.endIndex, conninfo[index] != "=", !isLibpqSpace(conninfo[index]) {
                index = conninfo.index(after: index)
            }
            let keyword = String(conninfo[keywordStart..<index])
            skipWhitespace()
            guard index < conninfo.endIndex, conninfo[index] == "=" else {
                throw UnreadableConnectionString(reason: "a word has no \"=\" after it")
            }
            index = conninfo.index(after: index)
            skipWhitespace()
            let valueStart = index
            let value = readConninfoValue(conninfo, from: &index)
            let range = valueStart..<index
            if secretKeywords.contains(keyword) {
                spans.append(SecretSpan(range: range, in: conninfo, keyword: keyword, value: value))
            } else if mayHoldCredentials(keyword: keyword, value: value) {
                // The server quotes the database name in its errors: hide what it would reveal.
                var span = SecretSpan(range: range, in: conninfo, keyword: nil, value: value)
                span.secrets.append(clippedToIdentifierLength(value))
                if let nested = try? ConnectionString(value) {
                    span.replacement = quotedConninfoValue(nested.redacted)
                    span.secrets += nested.secrets
                }
                spans.append(span)
            }
        }
        return spans
    }

    /// A value that looks like a connection string or a mistyped URL: the server and libpq
    /// quote database, user and host names in their errors, so it is hidden like a secret.
    private static func mayHoldCredentials(keyword: String, value: String) -> Bool {
        value.contains("://") || value.contains("=") || value.contains("@") && value.contains(":")
            || keyword == "dbname" && value.unicodeScalars.contains { "@:/%".unicodeScalars.contains($0) }
    }

    /// Reads a bare or single-quoted value starting at `index`, leaving `index` after it.
    private static func readConninfoValue(_ text: String.UnicodeScalarView, from index: inout String.Index) -> String {
        var value = String.UnicodeScalarView()
        let isQuoted = index < text.endIndex && text[index] == "'"
        if isQuoted { index = text.index(after: index) }
        while index < text.endIndex {
            var character = text[index]
            if isQuoted ? character == "'" : isLibpqSpace(character) { break }
            if character == "\\" {
                index = text.index(after: index)
                guard index < text.endIndex else { break }
                character = text[index]
            }
            value.append(character)
            index = text.index(after: index)
        }
        if isQuoted, index < text.endIndex { index = text.index(after: index) }
        return String(value)
    }

    /// What the server keeps of a name: at most 63 bytes, cut at a character boundary.
    private static func clippedToIdentifierLength(_ value: String) -> String {
        var clipped = String.UnicodeScalarView()
        var bytes = 0
        for scalar in value.unicodeScalars {
            bytes += String(scalar).utf8.count
            guard bytes <= 63 else { break }
            clipped.append(scalar)
        }
        return String(clipped)
    }

    /// C's isspace in the C locale, which libpq's conninfo parser uses.
    private static func isLibpqSpace(_ scalar: Unicode.Scalar) -> Bool {
        " \t\n\u{0B}\u{0C}\r".unicodeScalars.contains(scalar)
    }

    private static func quotedConninfoValue(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    /// `host`, `host:5432`, `[::1]:5432`, `%2Fvar%2Frun`: a name or address, then digits after
    /// its `:`, so a password missing its `@host` is shown neither as a host nor as a port.
    private static func isPlainHost(_ host: Substring.UnicodeScalarView) -> Bool {
        var afterAddress = host
        if host.first == "[" {
            guard let close = host.firstIndex(of: "]"), isMadeOf(host[host.index(after: host.startIndex)..<close], ":.%-_") else { return false }
            afterAddress = host[host.index(after: close)...]
            guard afterAddress.isEmpty || afterAddress.first == ":" else { return false }
        }
        guard let colon = afterAddress.firstIndex(of: ":") else { return isMadeOf(afterAddress, ".-_%~") }
        return isMadeOf(afterAddress[..<colon], ".-_%~") && afterAddress[afterAddress.index(after: colon)...].allSatisfy { ("0"..."9").contains($0) }
    }

    /// A user or database name in a URL: what is not a letter, a digit or one of `.-_%~+$` must
    /// be percent-encoded, so that a password typed in the wrong place is not shown as a name.
    private static func isPlainName(_ name: Substring.UnicodeScalarView) -> Bool {
        isMadeOf(name, ".-_%~+$")
    }

    private static func isMadeOf(_ text: Substring.UnicodeScalarView, _ extra: String) -> Bool {
        text.allSatisfy { ($0.isASCII && $0.properties.isAlphabetic) || ("0"..."9").contains($0) || extra.unicodeScalars.contains($0) }
    }

    private static func percentDecoded(_ text: Substring.UnicodeScalarView) -> String {
        String(text).removingPercentEncoding ?? String(text)
    }
}
