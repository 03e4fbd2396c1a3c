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
}
