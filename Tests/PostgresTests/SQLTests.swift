import Postgres
import Testing

@Suite("SQL interpolation and fragments")
struct SQLTests {
    @Test func interpolatedValuesBecomeNumberedPlaceholdersInOrder() {
        let name = "O'Brien"
        let age = 42
        let ratio = 0.5
        let active = true
        let sql: SQL = "SELECT * FROM users WHERE name = \(name) AND age > \(age) AND ratio < \(ratio) AND active = \(active)"
        #expect(sql.text == "SELECT * FROM users WHERE name = $1 AND age > $2 AND ratio < $3 AND active = $4")
        #expect(sql.binds == [.text("O'Brien"), .text("42"), .text("0.5"), .text("t")])
    }

    @Test func literalWithoutInterpolationHasNoBinds() {
        let sql: SQL = "SELECT 1"
        #expect(sql.text == "SELECT 1")
        #expect(sql.binds.isEmpty)
    }

    @Test func nullsBytesAndRawValuesAreBound() {
        let missing: String? = nil
        let present: Int? = 7
        let data: [UInt8] = [0, 1, 255]
        let sql: SQL = "VALUES (\(missing), \(present), \(data), \(PostgresValue.null), \(Int64.min), \(Int32.max))"
        #expect(sql.text == "VALUES ($1, $2, $3, $4, $5, $6)")
        #expect(sql.binds == [
            .null, .text("7"), .bytes([0, 1, 255]), .null, .text("-9223372036854775808"), .text("2147483647"),
        ])
    }

    @Test func unescapedFragmentsAreVerbatimAndBindNothing() {
        let column = "created_at"
        let limit = 10
        let sql: SQL = "SELECT id FROM t ORDER BY \(unescaped: column) LIMIT \(limit)"
        #expect(sql.text == "SELECT id FROM t ORDER BY created_at LIMIT $1")
        #expect(sql.binds == [.text("10")])
    }

    @Test func initializerCallOnAnInterpolatedLiteralStillBinds() {
        // `SQL("… \(x)")` is literal coercion (SE-0213): the interpolation is SQL's, so the
        // value is bound, never spliced into the text. Identifiers need `\(unescaped:)`.
        let schema = "test_1"
        let coerced = SQL("CREATE SCHEMA \(schema)")
        #expect(coerced.text == "CREATE SCHEMA $1")
        #expect(coerced.binds == [.text("test_1")])
        let spliced: SQL = "CREATE SCHEMA \(unescaped: schema)"
        #expect(spliced.text == "CREATE SCHEMA test_1")
        #expect(spliced.binds.isEmpty)
        // A String value (not a literal) is taken as text.
        let text = "SELECT \(42)"
        #expect(SQL(text).text == "SELECT 42")
    }

    @Test func descriptionNeverContainsParameters() {
        let secret = "hunter2"
        let sql: SQL = "SELECT * FROM users WHERE password = \(secret)"
        #expect(sql.description == "SELECT * FROM users WHERE password = $1")
        #expect(!String(describing: sql).contains(secret))
    }

    @Test(arguments: [
        (Double.nan, "NaN"), (Double.infinity, "Infinity"), (-Double.infinity, "-Infinity"),
        (0.1, "0.1"), (-1e-300, "-1e-300"), (1e300, "1e+300"),
    ])
    func doublesAreSentInAFormPostgreSQLParses(value: Double, text: String) {
        #expect(value.postgresValue == .text(text))
    }

    @Test func appendRenumbersTheFragmentsPlaceholders() {
        var sql: SQL = "SELECT * FROM pins WHERE kind = \("cafe") AND owner = \(3)"
        let lat = 1.5
        let lon = -2.5
        sql.append(" AND lat = \(lat) AND lon = \(lon)")
        #expect(sql.text == "SELECT * FROM pins WHERE kind = $1 AND owner = $2 AND lat = $3 AND lon = $4")
        #expect(sql.binds == [.text("cafe"), .text("3"), .text("1.5"), .text("-2.5")])
    }

    @Test func appendRenumbersMultiDigitPlaceholders() {
        var sql = SQL("SELECT", binds: Array(repeating: .null, count: 9))
        sql.append(SQL(" $1, $2, $10, $12", binds: (1 ... 12).map { .text(String($0)) }))
        #expect(sql.text == "SELECT $10, $11, $19, $21")
        #expect(sql.binds.count == 21)
        #expect(sql.binds[9] == .text("1"))
        #expect(sql.binds[20] == .text("12"))
    }

    @Test func appendLeavesDollarQuotesAndLiteralDollarsAlone() {
        var sql: SQL = "SELECT \(1)"
        sql.append(", $$a $ b$$, $tag$x$tag$, '$', 'US$ \(2)', $ , \(3)$")
        #expect(sql.text == "SELECT $1, $$a $ b$$, $tag$x$tag$, '$', 'US$ $2', $ , $3$")
        #expect(sql.binds == [.text("1"), .text("2"), .text("3")])
    }

    @Test func appendingAFragmentWithoutBindsCopiesItsText() {
        var sql: SQL = "SELECT \(1)"
        sql.append(" + 1 -- $$ $x")
        #expect(sql.text == "SELECT $1 + 1 -- $$ $x")
        #expect(sql.binds == [.text("1")])
    }

    @Test func appendingToAnEmptyStatementKeepsNumbering() {
        var sql = SQL("")
        sql.append("SELECT \("a"), \("b")")
        #expect(sql.text == "SELECT $1, $2")
        #expect(sql.binds == [.text("a"), .text("b")])
    }
}
