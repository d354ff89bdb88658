import Crypto

/// How model names become PostgreSQL names. Part of the store contract: never change it.
public enum StoreNaming {
    /// PostgreSQL's identifier limit in bytes (NAMEDATALEN - 1).
    public static let maximumIdentifierBytes = 63

    /// `paintColor` -> `paint_color`, `productID` -> `product_id`, `URLString` -> `url_string`.
    ///
    /// An underscore goes where a lowercase letter or digit meets an uppercase one, and before
    /// the last capital of a run that is followed by a lowercase letter; characters other than
    /// ASCII letters and digits become underscores; the result is lowercased and shortened to
    /// PostgreSQL's limit by `shortened(_:)`.
    public static func snakeCase(_ name: String) -> String {
        shortened(words(name))
    }

    /// The table of a hierarchy, named after its root entity.
    public static func tableName(entity: String) -> String {
        snakeCase(entity)
    }

    public static func columnName(attribute: String) -> String {
        snakeCase(attribute)
    }

    /// The foreign-key column of a to-one relationship: `<snake_name>_pk`.
    public static func foreignKeyColumnName(relationship: String) -> String {
        shortened(words(relationship) + "_pk")
    }

    /// The join table of a to-many relationship stored apart: `<entity>__<relationship>`.
    /// snake_case never yields a double underscore, so a join table cannot take the name of an
    /// entity's table (real models have both `Order.searchResults` and `OrderSearchResults`).
    public static func joinTableName(entity: String, relationship: String) -> String {
        shortened(words(entity) + "__" + words(relationship))
    }

    /// The order column of an ordered to-many: `<relationship>_order`.
    public static func orderColumnName(relationship: String) -> String {
        shortened(words(relationship) + "_order")
    }

    /// ASCII names, nearly all of them, go byte by byte: the same rules as
    /// `wordsOfCharacters`, which a test holds them to, at a fraction of the cost (planning
    /// names every column of every version on the way).
    static func words(_ name: String) -> String {
        let bytes = Array(name.utf8)
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return wordsOfCharacters(name) }
        func isUpper(_ b: UInt8) -> Bool { b >= 0x41 && b <= 0x5A }
        func isLower(_ b: UInt8) -> Bool { b >= 0x61 && b <= 0x7A }
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        let underscore = UInt8(ascii: "_")
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + 8)
        for index in bytes.indices {
            let c = bytes[index]
            guard isUpper(c) || isLower(c) || isDigit(c) else {
                if result.last != underscore { result.append(underscore) }
                continue
            }
            if isUpper(c), index > 0 {
                let previous = bytes[index - 1]
                let endsCapitalRun = isUpper(previous) && index + 1 < bytes.count && isLower(bytes[index + 1])
                if (isLower(previous) || isDigit(previous) || endsCapitalRun) && result.last != underscore {
                    result.append(underscore)
                }
            }
            result.append(isUpper(c) ? c + 0x20 : c)
        }
        return String(decoding: result, as: UTF8.self)
    }

    static func wordsOfCharacters(_ name: String) -> String {
        let chars = Array(name)
        var result = ""
        for (index, c) in chars.enumerated() {
            guard c.isASCII, c.isLetter || c.isNumber else {
                if !result.hasSuffix("_") { result.append("_") }
                continue
            }
            if c.isUppercase, index > 0 {
                let previous = chars[index - 1]
                let next: Character? = index + 1 < chars.count ? chars[index + 1] : nil
                let afterLowerOrDigit = previous.isASCII && (previous.isLowercase || previous.isNumber)
                let endsCapitalRun = previous.isASCII && previous.isUppercase && (next.map { $0.isASCII && $0.isLowercase } ?? false)
                if (afterLowerOrDigit || endsCapitalRun) && !result.hasSuffix("_") {
                    result.append("_")
                }
            }
            result.append(Character(c.lowercased()))
        }
        return result
    }

    /// Names longer than 63 bytes keep their first 54 bytes and get `_` and 8 hex digits of the
    /// SHA-256 of the whole name, so distinct long names stay distinct.
    public static func shortened(_ name: String) -> String {
        guard name.utf8.count > maximumIdentifierBytes else { return name }
        let digest = SHA256.hash(data: Array(name.utf8))
        let suffix = digest.prefix(4).map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined()
        var prefix = ""
        for c in name {
            if prefix.utf8.count + String(c).utf8.count > 54 { break }
            prefix.append(c)
        }
        return prefix + "_" + suffix
    }

    /// Names of the system columns every store table has.
    public static let systemColumns: Set<String> = ["_pk", "_entity"]
}
