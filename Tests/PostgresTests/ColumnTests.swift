import Postgres
import Testing

/// Rows read by column name: each name found once per result, then read from every row.
@Suite("Columns by name")
struct ColumnTests {
    /// What the store does: the columns a statement selects, found by name in its result.
    struct Labelled: Equatable {
        var id: Int
        var label: String?
        var ratio: Double

        struct Columns {
            let id, label, ratio: PostgresColumn

            init(_ rows: PostgresRows) throws(PostgresError) {
                id = try rows.column("id")
                label = try rows.column("label")
                ratio = try rows.column("ratio")
            }

            func read(_ row: PostgresRow) throws -> Labelled {
                Labelled(id: try row.int(id), label: try row.string(label), ratio: try row.double(ratio))
            }
        }

        static func all(_ rows: PostgresRows) throws -> [Labelled] {
            let columns = try Columns(rows)
            return try rows.map(columns.read)
        }
    }

    static let expected = [Labelled(id: 1, label: "one", ratio: 0.5), Labelled(id: 2, label: nil, ratio: 1.5)]

    @Test("the same columns in any order, with others among them, decode the same", arguments: [
        "SELECT n AS id, CASE WHEN n = 1 THEN 'one' END AS label, n - 0.5 AS ratio",
        "SELECT n - 0.5 AS ratio, n AS id, CASE WHEN n = 1 THEN 'one' END AS label",
        "SELECT 'first' AS other, CASE WHEN n = 1 THEN 'one' END AS label, n * 10 AS tens, n - 0.5 AS ratio, n AS id",
    ])
    func reorderedColumnsDecodeTheSame(select: String) throws {
        let connection = try Fixture.connect()
        let rows = try connection.query(SQL(select + " FROM generate_series(1, 2) AS n ORDER BY n"))
        #expect(try Labelled.all(rows) == Self.expected)
    }

    @Test("a table column renamed and selected under its old name still decodes; without the alias it fails, naming it")
    func renamedColumns() throws {
        let connection = try Fixture.connect()
        try connection.query("CREATE TABLE t (id int, label text, ratio float8)")
        try connection.query("INSERT INTO t VALUES (1, 'one', 0.5), (2, NULL, 1.5)")
        try connection.query("ALTER TABLE t RENAME COLUMN id TO ident")
        let aliased = try connection.query("SELECT label, ratio, ident AS id FROM t ORDER BY ident")
        #expect(try Labelled.all(aliased) == Self.expected)
        let plain = try connection.query("SELECT ident, label, ratio FROM t ORDER BY ident")
        let error = #expect(throws: PostgresError.self) { try Labelled.all(plain) }
        #expect(error?.code == .decoding)
        #expect(error?.message == "no column named id among ident, label, ratio")
    }

    @Test("an unknown column name fails clearly, naming the columns there are")
    func unknownColumn() throws {
        let rows = try Fixture.connect().query("SELECT 1 AS a, 2 AS b")
        let error = #expect(throws: PostgresError.self) { try rows.column("c") }
        #expect(error?.code == .decoding)
        #expect(error?.message == "no column named c among a, b")
        // Names are matched exactly, as the result spells them.
        #expect(throws: PostgresError.self) { try rows.column("A") }
    }

    @Test("a name given to two columns is refused, not read from the first", arguments: [
        "SELECT 1 AS a, 2 AS a",
        // What a join selecting u.name and m.name returns.
        "SELECT u.name, m.name FROM (SELECT 'user' AS name) u, (SELECT 'moderator' AS name) m",
    ])
    func ambiguousColumn(select: String) throws {
        let rows = try Fixture.connect().query(SQL(select))
        let name = rows.columns[0]
        let error = #expect(throws: PostgresError.self) { try rows.column(name) }
        #expect(error?.code == .decoding)
        #expect(error?.message.contains("more than one column is named \(name)") == true)
        // Read by name row by row, the same.
        let row = try #require(rows.first)
        #expect(throws: PostgresError.self) { try row.string(name) as String? }
    }

    @Test("a column is read only from the result it was found in, even one of the same statement")
    func columnOfAnotherResult() throws {
        let connection = try Fixture.connect()
        let first = try connection.query("SELECT \(1)::int AS id")
        let second = try connection.query("SELECT \(2)::int AS id")
        let id = try first.column("id")
        #expect(try first[0].int(id) as Int == 1)
        let error = #expect(throws: PostgresError.self) { try second[0].int(id) as Int }
        #expect(error?.code == .decoding)
        #expect(try second[0].int(second.column("id")) as Int == 2)
    }

    @Test("NULL through a found column: nil when optional, a decoding error otherwise")
    func nullThroughAColumn() throws {
        let rows = try Fixture.connect().query("SELECT NULL::int AS i, NULL::text AS s, 'x' AS present")
        let (i, s, present) = try (rows.column("i"), rows.column("s"), rows.column("present"))
        let row = try #require(rows.first)
        #expect(try row.isNull(i) && row.isNull(s) && !row.isNull(present))
        #expect(try row.int(i) as Int? == nil)
        #expect(try row.string(s) as String? == nil)
        #expect(try row.string(present) as String == "x")
        let error = #expect(throws: PostgresError.self) { try row.int(i) as Int }
        #expect(error?.code == .decoding)
    }

    @Test("an empty result still has its columns; a command's result has none")
    func emptyResultsAndCommands() throws {
        let connection = try Fixture.connect()
        let empty = try connection.query("SELECT 1 AS a WHERE false")
        #expect(try empty.column("a").name == "a")
        let command = try connection.query("CREATE TABLE t (a int)")
        let error = #expect(throws: PostgresError.self) { try command.column("a") }
        #expect(error?.message == "no column named a among none")
    }
}
