import Postgres
import Testing

@Suite("Parameter round trips")
struct RoundTripTests {
    @Test(arguments: [
        "plain",
        "it's a 'quoted' \"string\"",
        #"back\slash \\ \n \x00 E'\''"#,
        "emoji 😀👍🏽 and ünïcödé, 中文, עברית",
        "line one\nline two\r\nline three\ttabbed",
        "'); DROP TABLE x; --",
        "$1 $$ $tag$ ? %s {}",
        "",
    ])
    func text(value: String) throws {
        let connection = try Fixture.connect()
        try connection.query("CREATE TABLE x (v text)")
        #expect(try connection.scalarString("SELECT \(value)::text") == value)
        #expect(try connection.scalarInt("SELECT length(\(value)::text)") == value.unicodeScalars.count)
        try connection.query("INSERT INTO x VALUES (\(value))")
        #expect(try connection.scalarString("SELECT v FROM x") == value)
        #expect(try connection.scalarInt("SELECT count(*) FROM x WHERE v = \(value)") == 1)
        // An injection attempt stays a value: the table is still there.
        #expect(try connection.tableExists("x"))
    }

    @Test func longText() throws {
        let connection = try Fixture.connect()
        let value = String(repeating: "long text ✓ ", count: 50_000)
        #expect(try connection.scalarString("SELECT \(value)::text") == value)
    }

    @Test func textWithNULIsRejectedNotTruncated() throws {
        // PostgreSQL text cannot hold NUL. Sent as a C string, "admin\0x" would arrive as
        // "admin": a lookup by name would find another row. It must fail instead.
        let connection = try Fixture.connect()
        let value = "admin\u{0}suffix"
        let error = #expect(throws: PostgresError.self) {
            try connection.query("SELECT \(value)::text = 'admin'")
        }
        #expect(error?.code == .client)
        #expect(connection.isHealthy)
    }

    @Test func emptyStringIsNotNull() throws {
        let connection = try Fixture.connect()
        let rows = try connection.query("SELECT \("")::text AS v, \("")::text IS NULL AS isnull")
        let row = try #require(rows.first)
        #expect(try !row.isNull(0))
        #expect(try row.string(0) as String? == "")
        #expect(try row.bool("isnull") as Bool == false)
    }

    @Test func nullRoundTrips() throws {
        let connection = try Fixture.connect()
        let none: String? = nil
        let rows = try connection.query(
            "SELECT \(none)::text AS a, \(PostgresValue.null)::bigint AS b, \(Int?.none)::bigint IS NULL AS c, \([UInt8]?.none)::bytea AS d")
        let row = try #require(rows.first)
        #expect(try row.isNull(0))
        #expect(try row.string("a") as String? == nil)
        #expect(try row.int("b") as Int? == nil)
        #expect(try row.bool("c") as Bool == true)
        #expect(try row.bytes("d") == nil)
    }

    @Test(arguments: [Int.min, Int.min + 1, -1, 0, 1, 42, 2_147_483_648, Int.max - 1, Int.max])
    func int(value: Int) throws {
        let connection = try Fixture.connect()
        #expect(try connection.scalarInt("SELECT \(value)::bigint") == value)
        #expect(try connection.scalarString("SELECT \(value)::bigint::text") == String(value))
        try connection.query("CREATE TABLE n (v bigint)")
        try connection.query("INSERT INTO n VALUES (\(value))")
        #expect(try connection.scalarInt("SELECT v FROM n WHERE v = \(value)") == value)
        #expect(try connection.scalarInt("SELECT \(Int64(value))::bigint") == value)
    }

    @Test(arguments: [
        0.1, -1e-300, 1e300, 0.0, -0.0, 1.0 / 3.0, Double.pi, -123.456,
        Double.greatestFiniteMagnitude, Double.leastNormalMagnitude, Double.leastNonzeroMagnitude,
        Double.infinity, -Double.infinity,
    ])
    func double(value: Double) throws {
        let connection = try Fixture.connect()
        let rows = try connection.query("SELECT \(value)::float8")
        let decoded: Double = try #require(rows.first).double(0)
        // Bit for bit, including the sign of zero.
        #expect(decoded.bitPattern == value.bitPattern, "\(decoded) != \(value)")
        try connection.query("CREATE TABLE f (v float8)")
        try connection.query("INSERT INTO f VALUES (\(value))")
        #expect(try connection.scalarInt("SELECT count(*) FROM f WHERE v = \(value)") == 1)
    }

    @Test func nanRoundTrips() throws {
        let connection = try Fixture.connect()
        let rows = try connection.query("SELECT \(Double.nan)::float8, \(Double.nan)::float8 = 'NaN'::float8")
        let row = try #require(rows.first)
        #expect((try row.double(0) as Double).isNaN)
        #expect(try row.bool(1) as Bool)
    }

    @Test(arguments: [true, false])
    func bool(value: Bool) throws {
        let connection = try Fixture.connect()
        let rows = try connection.query("SELECT \(value)::boolean, NOT \(value)::boolean, \(value)::boolean::text")
        let row = try #require(rows.first)
        #expect(try row.bool(0) as Bool == value)
        #expect(try row.bool(1) as Bool == !value)
        #expect(try row.string(2) as String == (value ? "true" : "false"))
    }

    @Test func everyByteValueRoundTripsAsBytea() throws {
        let connection = try Fixture.connect()
        let bytes = (0 ... 255).map { UInt8($0) }
        let rows = try connection.query("SELECT \(bytes)::bytea AS v, length(\(bytes)::bytea) AS n", binaryResults: true)
        let row = try #require(rows.first)
        #expect(try row.bytes("v") == bytes)
        // Binary results: the length comes back as a big-endian int4, not text.
        #expect(try row.bytes("n") == [0, 0, 1, 0])

        try connection.query("CREATE TABLE b (v bytea)")
        try connection.query("INSERT INTO b VALUES (\(bytes))")
        let stored = try connection.query("SELECT v FROM b", binaryResults: true)
        #expect(try #require(stored.first).bytes(0) == bytes)
        // The text form is PostgreSQL's hex format.
        let hex = "\\x" + bytes.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
        #expect(try connection.scalarString("SELECT v FROM b") == hex)
    }

    @Test func emptyByteaIsNotNull() throws {
        let connection = try Fixture.connect()
        let rows = try connection.query("SELECT \([UInt8]())::bytea, length(\([UInt8]())::bytea)::text", binaryResults: true)
        let row = try #require(rows.first)
        #expect(try row.bytes(0) == [])
        #expect(try row.string(1) as String == "0")
    }

    @Test func largeRandomByteaRoundTripsExactly() throws {
        let connection = try Fixture.connect()
        var generator = SystemRandomNumberGenerator()
        let bytes = (0 ..< 4 * 1024 * 1024).map { _ in UInt8.random(in: 0 ... 255, using: &generator) }
        try connection.query("CREATE TABLE b (v bytea)")
        try connection.query("INSERT INTO b VALUES (\(bytes))")
        let rows = try connection.query("SELECT v, md5(v) FROM b", binaryResults: true)
        let row = try #require(rows.first)
        let back = try #require(try row.bytes(0))
        #expect(back.count == bytes.count)
        #expect(back == bytes)
        #expect(try connection.scalarInt("SELECT length(v) FROM b") == bytes.count)
    }

    @Test func manyParametersInOneStatement() throws {
        let connection = try Fixture.connect()
        var sql: SQL = "SELECT \(0)::int"
        for value in 1 ..< 1000 {
            sql.append(" + \(value)::int")
        }
        #expect(sql.binds.count == 1000)
        #expect(try connection.scalarInt(sql) == 999 * 1000 / 2)
    }
}
