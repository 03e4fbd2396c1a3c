import Synchronization

/// The rows of a result, copied out of libpq so that the `PGresult` is freed at once.
///
/// All values live in one contiguous buffer; each cell is a range of it, or null.
///
/// Read columns by name: find each one once per result with ``column(_:)``, then read it from
/// every row (`row.string(id)`), so that a statement's columns may be reordered, or others
/// added, without a read going to the wrong column.
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
    /// Tells this result from every other of the process, so that a column found in one is
    /// never read from another.
    let identity: UInt64

    private static let nextIdentity = Atomic<UInt64>(0)

    init(columns: [String], affectedRows: Int, storage: [UInt8], cells: [(start: Int, length: Int)], count: Int) {
        self.columns = columns
        self.affectedRows = affectedRows
        self.storage = storage
        self.cells = cells
        self.count = count
        self.identity = columns.isEmpty ? 0 : Self.nextIdentity.wrappingAdd(1, ordering: .relaxed).newValue
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(position: Int) -> PostgresRow {
        PostgresRow(rows: self, index: position)
    }

    /// The position of a column by name (the first, if several have it).
    public func column(named name: String) -> Int? {
        columns.firstIndex(of: name)
    }

    /// The column named `name`, to read from each row of this result (and no other). Throws
    /// ``PostgresError/Code/decoding`` when no column or more than one has that name: give
    /// every selected expression a name of its own (`… AS created_us`).
    public func column(_ name: String) throws(PostgresError) -> PostgresColumn {
        var found: Int?
        for (position, column) in columns.enumerated() where column == name {
            guard found == nil else {
                throw PostgresError(code: .decoding, message: "more than one column is named \(name); name them apart with AS")
            }
            found = position
        }
        guard let found else {
            throw PostgresError(
                code: .decoding, message: "no column named \(name) among \(columns.isEmpty ? "none" : columns.joined(separator: ", "))")
        }
        return PostgresColumn(name: name, position: found, result: identity)
    }
}

/// A column of one result, found by name (``PostgresRows/column(_:)``): reading it from a row
/// costs no name lookup.
public struct PostgresColumn: Sendable, Equatable, CustomStringConvertible {
    /// The column's name.
    public let name: String
    let position: Int
    /// The ``PostgresRows/identity`` of the result it was found in.
    let result: UInt64

    public var description: String { name }
}

/// One row of a result. Accessors throw `PostgresError.Code.decoding` on a type mismatch, a
/// column the result does not have, or a column found in another result.
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
        try rows.column(name).position
    }

    func position(_ column: PostgresColumn) throws(PostgresError) -> Int {
        guard column.result == rows.identity else {
            throw PostgresError(code: .decoding, message: "column \(column.name) was found in another result than this row's")
        }
        return column.position
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

    // Reads by a column found once per result: the same as by position, without the lookup.
    // A non-optional read of NULL is a decoding error, never a default value.

    /// Whether the cell is SQL NULL.
    public func isNull(_ column: PostgresColumn) throws(PostgresError) -> Bool { try isNull(position(column)) }
    /// The cell as text; nil for NULL.
    public func string(_ column: PostgresColumn) throws(PostgresError) -> String? { try string(position(column)) }
    /// The cell as text.
    public func string(_ column: PostgresColumn) throws(PostgresError) -> String { try string(position(column)) }
    /// The cell as an integer; nil for NULL.
    public func int(_ column: PostgresColumn) throws(PostgresError) -> Int? { try int(position(column)) }
    /// The cell as an integer.
    public func int(_ column: PostgresColumn) throws(PostgresError) -> Int { try int(position(column)) }
    /// The cell as a floating-point number; nil for NULL.
    public func double(_ column: PostgresColumn) throws(PostgresError) -> Double? { try double(position(column)) }
    /// The cell as a floating-point number.
    public func double(_ column: PostgresColumn) throws(PostgresError) -> Double { try double(position(column)) }
    /// The cell as a boolean; nil for NULL.
    public func bool(_ column: PostgresColumn) throws(PostgresError) -> Bool? { try bool(position(column)) }
    /// The cell as a boolean.
    public func bool(_ column: PostgresColumn) throws(PostgresError) -> Bool { try bool(position(column)) }
    /// The raw bytes of the cell: text for text-format results, the binary value otherwise.
    public func bytes(_ column: PostgresColumn) throws(PostgresError) -> [UInt8]? { try bytes(position(column)) }

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
