import CLibPQ
import Foundation

/// `connectionString` with every password replaced by `***`, for logs and error messages.
///
/// Understands both forms libpq accepts:
/// - URLs: `postgres://user:SECRET@host/db` and the `?password=SECRET` query parameter;
/// - key=value conninfo: `password=SECRET`, `password = 'SE CR\'ET'`, and a `dbname` value that
///   is itself a connection string.
/// Malformed input is redacted from the point where parsing fails, so a typo never reveals a secret.
public func redactedConnectionString(_ connectionString: String) -> String {
    var text = connectionString
    for span in secretSpans(in: connectionString).reversed() {
        text.replaceSubrange(span.range, with: span.replacement)
    }
    return text
}

/// `message` with the connection string and every password in it replaced.
///
/// libpq rarely echoes the password, but some messages quote pieces of the connection string;
/// scrubbing the literal secrets (raw, percent-decoded and as libpq parsed them) covers those.
func scrubbed(_ message: String, connectionString: String) -> String {
    var text = message
    if !connectionString.isEmpty {
        text = text.replacingOccurrences(of: connectionString, with: redactedConnectionString(connectionString))
    }
    var secrets = Set(secretSpans(in: connectionString).flatMap(\.secrets))
    if let parsed = passwordAsLibpqParsesIt(connectionString) { secrets.insert(parsed) }
    for secret in secrets.filter({ !$0.isEmpty }).sorted(by: { $0.count > $1.count }) {
        text = text.replacingOccurrences(of: secret, with: "***")
    }
    return text
}

/// A piece of a connection string that holds a secret, and what to show instead.
private struct SecretSpan {
    var range: Range<String.Index>
    var replacement: String
    /// Every spelling of the secret that could appear in a message.
    var secrets: [String]

    init(range: Range<String.Index>, in text: String, value: String) {
        self.range = range
        self.replacement = "***"
        let raw = String(text[range])
        self.secrets = [raw, value, raw.removingPercentEncoding ?? raw, value.removingPercentEncoding ?? value]
    }
}

/// Secret spans in order of position.
private func secretSpans(in connectionString: String) -> [SecretSpan] {
    if connectionString.hasPrefix("postgres://") || connectionString.hasPrefix("postgresql://") {
        return secretSpans(inURL: connectionString)
    }
    return secretSpans(inConninfo: connectionString)
}

/// 1. The userinfo ends at the last `@` before the first `/` (libpq stops at the first `@`;
///    taking the last one over-redacts rather than leaking a password containing `@`).
/// 2. The password is everything after the first `:` of the userinfo.
/// 3. A `password=` query parameter is redacted too.
private func secretSpans(inURL url: String) -> [SecretSpan] {
    guard let afterScheme = url.range(of: "://")?.upperBound else { return [] }
    var spans: [SecretSpan] = []
    let pathStart = url[afterScheme...].firstIndex(of: "/") ?? url.endIndex
    var queryStart = afterScheme
    if let at = url[afterScheme..<pathStart].lastIndex(of: "@") {
        if let colon = url[afterScheme..<at].firstIndex(of: ":") {
            let range = url.index(after: colon)..<at
            spans.append(SecretSpan(range: range, in: url, value: String(url[range])))
        }
        queryStart = at
    }
    guard let question = url[queryStart...].firstIndex(of: "?") else { return spans }
    var parameterStart = url.index(after: question)
    while parameterStart < url.endIndex {
        let parameterEnd = url[parameterStart...].firstIndex(of: "&") ?? url.endIndex
        let parameter = url[parameterStart..<parameterEnd]
        if let equals = parameter.firstIndex(of: "="), parameter[..<equals] == "password" {
            let range = url.index(after: equals)..<parameterEnd
            spans.append(SecretSpan(range: range, in: url, value: String(url[range])))
        }
        parameterStart = parameterEnd < url.endIndex ? url.index(after: parameterEnd) : parameterEnd
    }
    return spans
}

/// Walks `keyword = value` pairs the way libpq's conninfo parser does: values are either bare
/// (ending at whitespace) or single-quoted, with backslash escaping the next character.
private func secretSpans(inConninfo conninfo: String) -> [SecretSpan] {
    var spans: [SecretSpan] = []
    var index = conninfo.startIndex
    func skipWhitespace() {
        while index < conninfo.endIndex, conninfo[index].isWhitespace { index = conninfo.index(after: index) }
    }
    while true {
        skipWhitespace()
        guard index < conninfo.endIndex else { break }
        let keywordStart = index
        while index < conninfo.endIndex, conninfo[index] != "=", !conninfo[index].isWhitespace {
            index = conninfo.index(after: index)
        }
        let keyword = conninfo[keywordStart..<index]
        skipWhitespace()
        guard index < conninfo.endIndex, conninfo[index] == "=" else {
            // Malformed: hide everything that follows the keyword.
            let rest = index..<conninfo.endIndex
            if !rest.isEmpty { spans.append(SecretSpan(range: rest, in: conninfo, value: String(conninfo[rest]))) }
            break
        }
        index = conninfo.index(after: index)
        skipWhitespace()
        let valueStart = index
        let value = readConninfoValue(conninfo, from: &index)
        let range = valueStart..<index
        if keyword == "password" {
            spans.append(SecretSpan(range: range, in: conninfo, value: value))
        } else if keyword == "dbname", value.contains("=") || value.contains("://") {
            var span = SecretSpan(range: range, in: conninfo, value: value)
            span.replacement = quotedConninfoValue(redactedConnectionString(value))
            span.secrets = secretSpans(in: value).flatMap(\.secrets)
            spans.append(span)
        }
    }
    return spans
}

/// Reads a bare or single-quoted value starting at `index`, leaving `index` after it.
private func readConninfoValue(_ text: String, from index: inout String.Index) -> String {
    var value = ""
    let isQuoted = index < text.endIndex && text[index] == "'"
    if isQuoted { index = text.index(after: index) }
    while index < text.endIndex {
        var character = text[index]
        if isQuoted ? character == "'" : character.isWhitespace { break }
        if character == "\\" {
            index = text.index(after: index)
            guard index < text.endIndex else { break }
            character = text[index]
        }
        value.append(character)
        index = text.index(after: index)
    }
    if isQuoted, index < text.endIndex { index = text.index(after: index) }
    return value
}

private func quotedConninfoValue(_ value: String) -> String {
    "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
}

/// The password as libpq itself reads it, in case its parser and ours ever disagree.
private func passwordAsLibpqParsesIt(_ connectionString: String) -> String? {
    var errorMessage: UnsafeMutablePointer<CChar>?
    guard let options = PQconninfoParse(connectionString, &errorMessage) else {
        PQfreemem(errorMessage)
        return nil
    }
    defer { PQconninfoFree(options) }
    var option = options
    while let keyword = option.pointee.keyword {
        if String(cString: keyword) == "password", let value = option.pointee.val {
            return String(cString: value)
        }
        option += 1
    }
    return nil
}
