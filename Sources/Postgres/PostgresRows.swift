/// The rows of a result, copied out of libpq so that the `PGresult` is freed at once.
///
/// All values live in one contiguous buffer; each cell is a range of it, or null.
public struct PostgresRows: Sendable, RandomAccessCollection {
    /// Column names, in order.
    public let columns: [String]
    /// Rows the command affected or returned (`PQcmdTuples`): inserted, updated or deleted rows,
    /// or selected rows for a `SELECT`; 0 for commands that report none.
    public let affectedRows: Int
    let storage: [UInt8]
    /// Per cell: start offset in `storage` and length, or length -1 for null.
    let cells: [(start: Int, length: Int)]
    public let count: Int

    init(columns: [String], affectedRows: Int, storage: [UInt8], cells: [(start: Int, length: Int)], count: Int) {
        self.columns = columns
        self.affectedRows = affectedRows
        self.storage = storage
        self.cells = cells
        self.count = count
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(position: Int) -> PostgresRow {
        PostgresRow(rows: self, index: position)
    }

    /// The position of a column by name.
    public func column(named name: String) -> Int? {
        columns.firstIndex(of: name)
    }
}

/// One row of a result. Accessors throw `PostgresError.Code.decoding` on a type mismatch.
public struct PostgresRow: Sendable {
    let rows: PostgresRows
    let index: Int

    func cell(_ column: Int) throws(PostgresError) -> ArraySlice<UInt8>? {
        guard column >= 0, column < rows.columns.count else {
            throw PostgresError(code: .decoding, message: "no column \(column) in a result of \(rows.columns.count)")
        }
        let cell = rows.cells[index * rows.columns.count + column]
        if cell.length < 0 { return nil }
        return rows.storage[cell.start ..< cell.start + cell.length]
    }

    func position(_ name: String) throws(PostgresError) -> Int {
        guard let position = rows.column(named: name) else {
            throw PostgresError(code: .decoding, message: "no column named \(name)")
        }
        return position
    }

    func required(_ column: Int) throws(PostgresError) -> ArraySlice<UInt8> {
        guard let cell = try cell(column) else {
            throw PostgresError(code: .decoding, message: "column \(rows.columns[column]) is null")
        }
        return cell
    }

    /// Whether the cell is SQL NULL.
    public func isNull(_ column: Int) throws(PostgresError) -> Bool {
        try cell(column) == nil
    }

    /// The raw bytes of the cell: text for text-format results, the binary value otherwise.
    public func bytes(_ column: Int) throws(PostgresError) -> [UInt8]? {
        try cell(column).map { Array($0) }
    }

    public func string(_ column: Int) throws(PostgresError) -> String? {
        try cell(column).map { String(decoding: $0, as: UTF8.self) }
    }

    public func string(_ column: Int) throws(PostgresError) -> String {
        String(decoding: try required(column), as: UTF8.self)
    }

    public func int(_ column: Int) throws(PostgresError) -> Int? {
        guard let cell = try cell(column) else { return nil }
        return try Self.parseInt(cell, column: rows.columns[column])
    }

    public func int(_ column: Int) throws(PostgresError) -> Int {
        try Self.parseInt(try required(column), column: rows.columns[column])
    }

    public func double(_ column: Int) throws(PostgresError) -> Double? {
        guard let cell = try cell(column) else { return nil }
        return try Self.parseDouble(cell, column: rows.columns[column])
    }

    public func double(_ column: Int) throws(PostgresError) -> Double {
        try Self.parseDouble(try required(column), column: rows.columns[column])
    }

    public func bool(_ column: Int) throws(PostgresError) -> Bool? {
        guard let cell = try cell(column) else { return nil }
        return try Self.parseBool(cell, column: rows.columns[column])
    }

    public func bool(_ column: Int) throws(PostgresError) -> Bool {
        try Self.parseBool(try required(column), column: rows.columns[column])
    }

    public func string(_ name: String) throws(PostgresError) -> String? { try string(position(name)) }
    public func string(_ name: String) throws(PostgresError) -> String { try string(position(name)) }
    public func int(_ name: String) throws(PostgresError) -> Int? { try int(position(name)) }
    public func int(_ name: String) throws(PostgresError) -> Int { try int(position(name)) }
    public func double(_ name: String) throws(PostgresError) -> Double? { try double(position(name)) }
    public func double(_ name: String) throws(PostgresError) -> Double { try double(position(name)) }
    public func bool(_ name: String) throws(PostgresError) -> Bool? { try bool(position(name)) }
    public func bool(_ name: String) throws(PostgresError) -> Bool { try bool(position(name)) }
    public func bytes(_ name: String) throws(PostgresError) -> [UInt8]? { try bytes(position(name)) }

    static func parseInt(_ bytes: ArraySlice<UInt8>, column: String) throws(PostgresError) -> Int {
        var value = 0
        var negative = false
        var index = bytes.startIndex
        if index < bytes.endIndex, bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard index < bytes.endIndex else { throw mismatch(column, "an integer") }
        while index < bytes.endIndex {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { throw mismatch(column, "an integer") }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = negative
                ? times.subtractingReportingOverflow(Int(digit))
                : times.addingReportingOverflow(Int(digit))
            guard !overflow1, !overflow2 else { throw mismatch(column, "an integer") }
            value = sum
            index += 1
        }
        return value
    }

    static func parseDouble(_ bytes: ArraySlice<UInt8>, column: String) throws(PostgresError) -> Double {
        guard let value = Double(String(decoding: bytes, as: UTF8.self)) else {
            throw mismatch(column, "a number")
        }
        return value
    }

    static func parseBool(_ bytes: ArraySlice<UInt8>, column: String) throws(PostgresError) -> Bool {
        switch bytes.first {
        case UInt8(ascii: "t"): return true
        case UInt8(ascii: "f"): return false
        default: throw mismatch(column, "a boolean")
        }
    }

    static func mismatch(_ column: String, _ expected: String) -> PostgresError {
        PostgresError(code: .decoding, message: "column \(column) is not \(expected)")
    }
}
