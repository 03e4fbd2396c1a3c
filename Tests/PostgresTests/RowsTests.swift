import Postgres
import Testing

@Suite("PostgresRows")
struct RowsTests {
    @Test func columnNamesAndPositions() throws {
        let connection = try Fixture.connect()
        let rows = try connection.query("SELECT 1 AS id, 'x' AS label, NULL::int AS missing, 2.5::float8 AS ratio")
        #expect(rows.columns == ["id", "label", "missing", "ratio"])
        #expect(rows.column(named: "label") == 1)
        #expect(rows.column(named: "ratio") == 3)
        #expect(rows.column(named: "nope") == nil)
        #expect(rows.count == 1)
        let row = try #require(rows.first)
        #expect(try row.int("id") as Int == 1)
        #expect(try row.string("label") as String == "x")
        #expect(try row.int("missing") as Int? == nil)
        #expect(try row.double("ratio") as Double == 2.5)
    }

    @Test func rowsComeInOrderAndIterate() throws {
        let connection = try Fixture.connect()
        let rows = try connection.query("SELECT n, n * n AS square, n % 2 = 0 AS even FROM generate_series(1, 5) AS n ORDER BY n")
        #expect(rows.count == 5)
        #expect(try rows.map { try $0.int(0) as Int } == [1, 2, 3, 4, 5])
        #expect(try rows.map { try $0.int("square") as Int } == [1, 4, 9, 16, 25])
        #expect(try rows.map { try $0.bool("even") as Bool } == [false, true, false, true, false])
        #expect(try rows[4].int(1) as Int == 25)
    }

    @Test func emptyResultKeepsItsColumns() throws {
        let connection = try Fixture.connect()
        let rows = try connection.query("SELECT 1 AS a, 2 AS b WHERE false")
        #expect(rows.isEmpty)
        #expect(rows.columns == ["a", "b"])
    }

    @Test func affectedRowsCountsInsertUpdateAndDelete() throws {
        let connection = try Fixture.connect()
        let create = try connection.query("CREATE TABLE t (id int, v text)")
        #expect(create.affectedRows == 0)
        #expect(create.columns.isEmpty)
        let insert = try connection.query("INSERT INTO t SELECT n, 'a' FROM generate_series(1, 5) AS n")
        #expect(insert.affectedRows == 5)
        let update = try connection.query("UPDATE t SET v = \("b") WHERE id <= \(3)")
        #expect(update.affectedRows == 3)
        #expect(update.isEmpty)
        let none = try connection.query("UPDATE t SET v = 'c' WHERE id > 100")
        #expect(none.affectedRows == 0)
        let delete = try connection.query("DELETE FROM t WHERE v = \("b")")
        #expect(delete.affectedRows == 3)
        let returning = try connection.query("UPDATE t SET v = 'd' RETURNING id")
        #expect(returning.affectedRows == 2)
        #expect(try returning.map { try $0.int(0) as Int }.sorted() == [4, 5])
    }

    @Test func nullHandling() throws {
        let connection = try Fixture.connect()
        let rows = try connection.query(
            "SELECT NULL::int AS i, NULL::text AS s, NULL::float8 AS d, NULL::boolean AS b, NULL::bytea AS x, 0 AS zero")
        let row = try #require(rows.first)
        for column in 0 ..< 5 {
            #expect(try row.isNull(column))
        }
        #expect(try !row.isNull(5))
        #expect(try row.int("i") as Int? == nil)
        #expect(try row.string("s") as String? == nil)
        #expect(try row.double("d") as Double? == nil)
        #expect(try row.bool("b") as Bool? == nil)
        #expect(try row.bytes("x") == nil)
        #expect(try row.int("zero") as Int? == 0)
        // A non-optional read of NULL is a decoding error, not a default value.
        for read in [
            { _ = try row.int("i") as Int },
            { _ = try row.string("s") as String },
            { _ = try row.double("d") as Double },
            { _ = try row.bool("b") as Bool },
        ] as [() throws -> Void] {
            let error = #expect(throws: PostgresError.self) { try read() }
            #expect(error?.code == .decoding)
        }
    }

    @Test func typeMismatchesAreDecodingErrors() throws {
        let connection = try Fixture.connect()
        let rows = try connection.query("""
            SELECT 'abc'::text AS word, '12x'::text AS almost, ''::text AS empty, '-'::text AS dash,
                   '99999999999999999999'::numeric AS huge, '-9223372036854775809'::numeric AS tiny,
                   1.5::float8 AS fraction, 1 AS one, 'yes'::text AS yes
            """)
        let row = try #require(rows.first)
        let reads: [(String, () throws -> Void)] = [
            ("int on text", { _ = try row.int("word") as Int }),
            ("int on digits and letters", { _ = try row.int("almost") as Int }),
            ("int on empty", { _ = try row.int("empty") as Int? }),
            ("int on a lone minus", { _ = try row.int("dash") as Int }),
            ("int overflow", { _ = try row.int("huge") as Int }),
            ("int underflow", { _ = try row.int("tiny") as Int }),
            ("int on a fraction", { _ = try row.int("fraction") as Int }),
            ("double on text", { _ = try row.double("word") as Double }),
            ("bool on an integer", { _ = try row.bool("one") as Bool }),
            ("bool on yes", { _ = try row.bool("yes") as Bool }),
            ("unknown column name", { _ = try row.string("no_such_column") as String? }),
            ("column index past the end", { _ = try row.string(9) as String? }),
            ("negative column index", { _ = try row.isNull(-1) }),
        ]
        for (name, read) in reads {
            let error = #expect(throws: PostgresError.self, "\(name)") { try read() }
            #expect(error?.code == .decoding, "\(name)")
        }
        // The same columns read as what they are.
        #expect(try row.string("word") as String == "abc")
        #expect(try row.double("fraction") as Double == 1.5)
        #expect(try row.double("one") as Double == 1)
        #expect(try row.string("huge") as String == "99999999999999999999")
    }

    @Test func decodingErrorNamesTheColumn() throws {
        let connection = try Fixture.connect()
        let row = try #require(try connection.query("SELECT 'abc' AS word").first)
        let error = #expect(throws: PostgresError.self) { _ = try row.int("word") as Int }
        #expect(error?.message.contains("word") == true)
    }

    @Test func bytesOfATextResultAreItsUTF8() throws {
        let connection = try Fixture.connect()
        let row = try #require(try connection.query("SELECT 'é' AS s, 12 AS n").first)
        #expect(try row.bytes("s") == [0xC3, 0xA9])
        #expect(try row.bytes("n") == Array("12".utf8))
    }

    @Test func rowsOutliveTheConnection() throws {
        var connection: PostgresConnection? = try Fixture.connect()
        let rows = try #require(connection).query("SELECT n, repeat('x', n) FROM generate_series(1, 100) AS n")
        connection = nil
        #expect(rows.count == 100)
        #expect(try rows[99].string(1) as String == String(repeating: "x", count: 100))
    }
}
