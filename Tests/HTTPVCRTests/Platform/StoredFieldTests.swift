#if canImport(FoundationNetworking)
import Foundation
import Testing
@testable import HTTPVCR

/// The raw field readers, on types of the test's own whose layout the test knows: what they find, read and write.
@Suite struct StoredFieldTests {
    protocol Listener: AnyObject {}
    final class Child: Listener {}
    final class Stranger {}

    class Base {
        var inherited = 1
    }

    final class Owner: Base {
        var number = 7
        var name = "seven"
        let parent = Child()
        var child: Child? = Child()
        var listener: (any Listener)?
        var anything: AnyObject?
    }

    struct Pair {
        var count: Int
        var label: String
    }

    @Test func findsAFieldTheTypeDeclaresByName() throws {
        let owner = Owner()
        let number = try #require(StoredField("number", of: Owner.self))
        #expect(ObjectIdentifier(number.type) == ObjectIdentifier(Int.self))
        #expect(number.size == MemoryLayout<Int>.size)
        #expect(number.value(in: owner) as? Int == 7)
        #expect(number.value(in: owner, as: Int.self) == 7)
        #expect(number.value(in: owner, as: String.self) == nil, "a cast to another type fails, never reinterprets")
        let name = try #require(StoredField("name", of: Owner.self))
        #expect(name.value(in: owner) as? String == "seven")
        #expect(name.offset != number.offset)
    }

    @Test func findsASuperclasssFieldAtItsPlaceInTheInstance() throws {
        #expect(StoredField("missing", of: Owner.self) == nil)
        let inherited = try #require(StoredField("inherited", of: Owner.self))
        #expect(inherited.offset == StoredField("inherited", of: Base.self)?.offset)
        #expect(inherited.value(in: Owner()) as? Int == 1)
    }

    @Test func writesOnlyAValueOfTheFieldsType() throws {
        let owner = Owner()
        let number = try #require(StoredField("number", of: Owner.self))
        #expect(number.set(42, in: owner))
        #expect(owner.number == 42)
        #expect(!number.set("42", in: owner))
        #expect(owner.number == 42)
    }

    @Test func readsAnObjectFieldWithoutBoxingIt() throws {
        let owner = Owner()
        let parent = try #require(StoredField("parent", of: Owner.self))
        #expect(parent.object(in: owner) === owner.parent)
        // Only a field of class type: an optional's or another type's is not read as a pointer.
        #expect(try #require(StoredField("child", of: Owner.self)).object(in: owner) == nil)
        #expect(try #require(StoredField("number", of: Owner.self)).object(in: owner) == nil)
    }

    @Test func readsAStructsField() throws {
        let label = try #require(StoredField("label", of: Pair.self))
        #expect(label.value(inValue: Pair(count: 3, label: "three")) as? String == "three")
    }

    /// The first read casts; the ones after it read the field's first word. Both must give what the field holds.
    @Test func readsAnExistentialFieldAsTheObjectItHolds() throws {
        let field = ExistentialObjectField<Child>(try #require(StoredField("listener", of: Owner.self)))
        let owner = Owner()
        #expect(field.object(in: owner) == nil)
        let listener = Child()
        owner.listener = listener
        #expect(field.object(in: owner) === listener)
        #expect(field.object(in: owner) === listener, "read again through the learned word")
        let other = Child()
        owner.listener = other
        #expect(field.object(in: owner) === other)
        owner.listener = nil
        #expect(field.object(in: owner) == nil)
    }

    @Test func anExistentialFieldHoldingAnotherClassGivesNothing() throws {
        let field = ExistentialObjectField<Child>(try #require(StoredField("anything", of: Owner.self)))
        let owner = Owner()
        owner.anything = Child()
        #expect(field.object(in: owner) === owner.anything)
        owner.anything = Stranger()
        #expect(field.object(in: owner) == nil)
    }
}
#endif
