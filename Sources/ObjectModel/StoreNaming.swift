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

    static func words(_ name: String) -> String {
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
