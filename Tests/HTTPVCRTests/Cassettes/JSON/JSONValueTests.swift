import Foundation
@testable import HTTPVCR
import Testing

/// A property list is read into the same value as JSON; its data and dates are the two cases JSON has not.
@Suite struct JSONValueTests {
    @Test func aPropertyListIsReadIntoTheValueWithItsKeysSorted() throws {
        let date = Date(timeIntervalSince1970: 1_764_000_000)
        let object: [String: Any] = [
            "b": "text", "a": [1, 2.5, true] as [Any], "c": Data([0xFF, 0]), "d": date,
            "e": ["nested": UInt64.max] as [String: Any],
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: object, format: .xml, options: 0)
        let read = try CassetteFile.value(of: data, isPropertyList: true)
        guard case let .object(members) = read else {
            Issue.record("not an object: \(read)")
            return
        }
        #expect(members.map(\.0) == ["a", "b", "c", "d", "e"])
        #expect(members[1].1 == .string("text"))
        #expect(members[2].1 == .data(Data([0xFF, 0])))
        #expect(members[3].1 == .date(date))
        guard case let .array(numbers) = members[0].1 else {
            Issue.record("not an array: \(members[0].1)")
            return
        }
        let fields = try FieldReader(.object([("one", numbers[0]), ("half", numbers[1]), ("flag", numbers[2])]),
                                     path: "")
        #expect(try fields.int("one") == 1 && fields.double("half") == 2.5 && fields.int("flag") == 1)
        #expect(FieldReader.text(try FieldReader(members[4].1, path: "")["nested"]!) == String(UInt64.max))
    }

    @Test func theValueGoesBackToFoundationObjects() {
        let date = Date(timeIntervalSince1970: 1)
        let value = JSONValue.object([("d", .date(date)), ("b", .data(Data([1]))), ("n", .null)])
        let object = value.foundationObject as? [String: Any]
        #expect(object?["d"] as? Date == date)
        #expect(object?["b"] as? Data == Data([1]))
        #expect(object?.count == 2)
    }
}
