import Foundation

/// Compares one recorded interaction with a live (or newer) one: the outcome, the status, the `Content-Type`, and
/// the JSON body's shape (``JSONShape``), plus values at the paths the user named. The one comparison behind
/// ``RecordMode/verify`` and `vcr diff`, so both say the same thing about the same two answers.
package enum ShapeComparison {
    /// `METHOD URL`.
    package static func describe(_ request: RecordedRequest) -> String {
        "\(request.method) \(request.url)"
    }

    /// The drift of `live` from `recorded`, or nil when they do not differ.
    package static func drift(
        recorded: Interaction, live: Interaction, comparedValuePaths: [String]
    ) -> CassetteDrift? {
        let differences = differences(recorded: recorded, live: live, comparedValuePaths: comparedValuePaths)
        guard !differences.isEmpty else { return nil }
        return CassetteDrift(.changed, request: describe(live.request), differences: differences)
    }

    package static func differences(
        recorded: Interaction, live: Interaction, comparedValuePaths: [String]
    ) -> [CassetteDrift.Difference] {
        let recordedOutcome = outcome(recorded)
        let liveOutcome = outcome(live)
        if recordedOutcome != liveOutcome {
            return [.init(.outcome, at: "outcome", recorded: recordedOutcome, live: liveOutcome)]
        }
        guard let recordedResponse = recorded.response, let liveResponse = live.response else { return [] }
        var found: [CassetteDrift.Difference] = []
        if recordedResponse.statusCode != liveResponse.statusCode {
            found.append(.init(
                .status, at: "status",
                recorded: String(recordedResponse.statusCode), live: String(liveResponse.statusCode)
            ))
        }
        let recordedType = recordedResponse.headers[field: "Content-Type"]
        let liveType = liveResponse.headers[field: "Content-Type"]
        if recordedType.map(normalized) != liveType.map(normalized) {
            found.append(.init(
                .contentType, at: "Content-Type", recorded: recordedType ?? "none", live: liveType ?? "none"
            ))
        }
        let recordedJSON = json(recorded.body, response: recordedResponse)
        let liveJSON = json(live.body, response: liveResponse)
        switch (recordedJSON, liveJSON) {
        case let (recordedValue?, liveValue?):
            found += JSONShape(recordedValue).differences(to: JSONShape(liveValue), at: "$")
            found += valueDifferences(recordedValue, liveValue, paths: comparedValuePaths)
        case let (recordedValue?, nil):
            found.append(.init(
                .typeChanged, at: "$", recorded: JSONShape.typeName(recordedValue), live: bodyKind(live.body)
            ))
        case let (nil, liveValue?):
            found.append(.init(
                .typeChanged, at: "$", recorded: bodyKind(recorded.body), live: JSONShape.typeName(liveValue)
            ))
        case (nil, nil):
            break
        }
        return found
    }

    /// What a chapter ended with, in words: a response, an error, or nothing yet.
    private static func outcome(_ interaction: Interaction) -> String {
        if let error = interaction.error { return "error \(error.domain) \(error.code)" }
        return interaction.response == nil ? "no response" : "response"
    }

    private static func normalized(_ contentType: String) -> String {
        String(contentType.lowercased().filter { $0 != " " && $0 != "\t" })
    }

    /// The body as JSON, decompressed where it was stored compressed; nil when it is not JSON. A body counts as
    /// JSON when it is an object or an array, or any JSON value under a JSON `Content-Type`.
    private static func json(_ body: Data, response: RecordedResponse) -> JSONValue? {
        guard !body.isEmpty else { return nil }
        var bytes = body
        if let encoding = response.headers[field: "Content-Encoding"],
           let decoded = Inflate.decode(body, contentEncoding: encoding) {
            bytes = decoded
        }
        guard let value = LosslessJSONReader.value(of: bytes) else { return nil }
        if value.isContainer { return value }
        let contentType = response.headers[field: "Content-Type"]?.lowercased() ?? ""
        return contentType.contains("json") ? value : nil
    }

    private static func bodyKind(_ body: Data) -> String {
        body.isEmpty ? "empty" : "not JSON"
    }

    /// Values at the named paths, compared as their compact JSON text.
    private static func valueDifferences(
        _ recorded: JSONValue, _ live: JSONValue, paths: [String]
    ) -> [CassetteDrift.Difference] {
        paths.compactMap { path in
            guard let recordedValues = JSONPathLocation.values(at: path, in: recorded),
                  let liveValues = JSONPathLocation.values(at: path, in: live),
                  recordedValues != liveValues
            else { return nil }
            return .init(.valueChanged, at: path, recorded: text(recordedValues), live: text(liveValues))
        }
    }

    private static func text(_ values: [JSONValue]) -> String {
        let texts = values.map { String(decoding: JSONLayout.compact.bytes(of: $0), as: UTF8.self) }
        return texts.count == 1 ? texts[0] : texts.isEmpty ? "nothing" : "[" + texts.joined(separator: ", ") + "]"
    }
}
