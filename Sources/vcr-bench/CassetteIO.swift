import Foundation
import HTTPVCR

extension Bench {
    /// Loading and saving the largest cassette, against `JSONSerialization` parsing and writing the same bytes.
    mutating func cassetteIO() throws {
        progress("cassette I/O: \(options.runs) runs of load and save, \(Self.largest) interactions")
        let file = files[Self.largest]!
        let n = "\(Self.largest)"
        let disk = try bytesOnDisk(Self.largest)
        let (tape, _) = try CassetteFile.read(at: file)
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: file))
        let floorOutput = directory.appendingPathComponent("save-floor.json")
        let vcrOutput = directory.appendingPathComponent("save-vcr.json")

        var loadFloor = Row("load: JSONSerialization (floor)", n: n, unit: .milliseconds, note: "Data(contentsOf:) + jsonObject(with:)")
        var loadRead = Row("load: CassetteFile.read", n: n, unit: .milliseconds, note: "read + parse + decode to a Tape")
        var loadInsert = Row("load: VCR.insertCassette", n: n, unit: .milliseconds, note: "read + decode + match index + player")
        var saveFloor = Row("save: JSONSerialization (floor)", n: n, unit: .milliseconds, note: "data(.prettyPrinted, .sortedKeys) + atomic write")
        var saveWrite = Row("save: CassetteFile.write", n: n, unit: .milliseconds, note: "encode + atomic write")
        var floorBytes = 0

        for _ in 0..<options.runs {
            let (object, floorTime) = try timed { try JSONSerialization.jsonObject(with: Data(contentsOf: file)) }
            withExtendedLifetime(object) {}
            loadFloor.samples.append(floorTime * 1000)

            let (decoded, readTime) = try timed { try CassetteFile.read(at: file) }
            withExtendedLifetime(decoded) {}
            loadRead.samples.append(readTime * 1000)

            let (cassette, insertTime) = try timed { try insert(Self.largest, mode: .chronological) }
            try VCR.ejectCassette()
            withExtendedLifetime(cassette) {}
            loadInsert.samples.append(insertTime * 1000)

            let (_, saveFloorTime) = try timed {
                let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
                try data.write(to: floorOutput, options: .atomic)
                floorBytes = data.count
            }
            saveFloor.samples.append(saveFloorTime * 1000)

            let (_, saveTime) = try timed { try CassetteFile.write(tape, to: vcrOutput, as: .json) }
            saveWrite.samples.append(saveTime * 1000)
        }
        let saved = (try? Data(contentsOf: vcrOutput)) ?? Data()
        guard saved == (try? Data(contentsOf: file)) else {
            throw BenchFailure("CassetteFile.write of the tape read from \(file.path) did not give the same bytes")
        }
        table.section("cassette I/O: the \(Self.largest)-interaction cassette, \(disk) bytes on disk "
            + "(JSONSerialization writes \(floorBytes))")
        for row in [loadFloor, loadRead, loadInsert, saveFloor, saveWrite] { table.add(row) }
        ratios["load_vs_jsonserialization"] = loadInsert.pairedRatio(to: loadFloor)
        ratios["load_read_vs_jsonserialization"] = loadRead.pairedRatio(to: loadFloor)
        table.add(Row("load: CassetteFile.read / floor", n: n, unit: .ratio, samples: loadRead.samples.indices.map { loadRead.samples[$0] / loadFloor.samples[$0] },
                      note: "for reference; the target uses VCR.insertCassette"))
        ratios["save_vs_jsonserialization"] = saveWrite.pairedRatio(to: saveFloor)
    }
}
