/// PostgreSQL's text form of a one-dimensional array, to bind as one text parameter and cast
/// (`\(PostgresArray.text(ids))::text[]`): each element quoted, with `\` and `"` escaped, nil as
/// `NULL`. For numbers, their Swift description (which PostgreSQL reads back exactly).
enum PostgresArray {
    static func text(_ elements: [String?]) -> String {
        var literal = "{"
        for (index, element) in elements.enumerated() {
            if index > 0 { literal += "," }
            guard let element else {
                literal += "NULL"
                continue
            }
            literal += "\""
            for character in element {
                if character == "\\" || character == "\"" { literal += "\\" }
                literal.append(character)
            }
            literal += "\""
        }
        return literal + "}"
    }

    static func text(_ elements: [String]) -> String {
        text(elements.map(Optional.some))
    }

    /// The elements of a one-dimensional array in PostgreSQL's text form (`{a,"b c"}`), as
    /// strings; an unquoted `NULL` is not expected (arrays read here hold none).
    static func parseText(_ literal: String) throws(StoreError) -> [String] {
        var characters = literal[...]
        guard characters.first == "{", characters.last == "}" else { throw .unexpected("not an array: \(literal)") }
        characters = characters.dropFirst().dropLast()
        var elements: [String] = []
        guard !characters.isEmpty else { return elements }
        var current = ""
        var quoted = false
        var escaped = false
        for character in characters {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == ",", !quoted {
                elements.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        elements.append(current)
        return elements
    }
}
