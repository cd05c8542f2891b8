import Foundation
import HTTPVCR

extension Bench {
    /// What a loaded cassette holds, against its size on disk: the tape alone (`CassetteFile.read`), and the
    /// inserted cassette (tape, match index, player, the recorded requests as `URLRequest`s).
    mutating func memory() throws {
        progress("memory: loading the \(Self.largest)-interaction cassette")
        let disk = try bytesOnDisk(Self.largest)
        var tapeHeap: [Double] = [], cassetteHeap: [Double] = [], cassetteRSS: [Double] = [], peak: [Double] = []
        var floorHeap: [Double] = [], floorPeak: [Double] = []
        var available = true
        // Heap figures barely move between runs; a few are enough.
        for _ in 0..<(options.quick ? 1 : min(options.runs, 3)) {
            do {
                let before = Memory.Snapshot.take()
                Memory.resetPeak()
                let object = try JSONSerialization.jsonObject(with: Data(contentsOf: files[Self.largest]!))
                let after = Memory.Snapshot.take()
                withExtendedLifetime(object) {}
                let growth = after.growth(since: before)
                if let heap = growth.heap { floorHeap.append(Double(heap)) }
                if let value = growth.peak { floorPeak.append(Double(value)) }
            }
            do {
                let before = Memory.Snapshot.take()
                let (tape, _) = try CassetteFile.read(at: files[Self.largest]!)
                let after = Memory.Snapshot.take()
                withExtendedLifetime(tape) {}
                if let heap = after.growth(since: before).heap { tapeHeap.append(Double(heap)) } else { available = false }
            }
            do {
                let before = Memory.Snapshot.take()
                Memory.resetPeak()
                let cassette = try insert(Self.largest, mode: .chronological)
                let after = Memory.Snapshot.take()
                try VCR.ejectCassette()
                withExtendedLifetime(cassette) {}
                let growth = after.growth(since: before)
                if let heap = growth.heap { cassetteHeap.append(Double(heap)) }
                if let rss = growth.rss { cassetteRSS.append(Double(rss)) }
                if let value = growth.peak { peak.append(Double(value)) }
            }
        }
        let megabyte = 1_048_576.0
        let n = "\(Self.largest)"
        table.section("memory: the \(Self.largest)-interaction cassette (Linux: glibc heap in use, /proc/self/status)")
        table.add(Row("bytes on disk", n: n, unit: .megabytes, samples: [Double(disk) / megabyte], note: "\(disk) bytes, pretty-printed JSON"))
        guard available else {
            table.add(Row("memory", n: n, unit: .megabytes, note: "n/a on this platform"))
            return
        }
        table.add(Row("JSONSerialization object (floor), heap", n: n, unit: .megabytes, samples: floorHeap.map { $0 / megabyte },
                      note: String(format: "%.2fx disk: the parsed document alone", Stats.median(floorHeap) / Double(disk))))
        table.add(Row("tape (CassetteFile.read), heap", n: n, unit: .megabytes, samples: tapeHeap.map { $0 / megabyte },
                      note: String(format: "%.2fx disk", Stats.median(tapeHeap) / Double(disk))))
        table.add(Row("inserted cassette, heap", n: n, unit: .megabytes, samples: cassetteHeap.map { $0 / megabyte },
                      note: String(format: "%.2fx disk: tape, match index, player", Stats.median(cassetteHeap) / Double(disk))))
        table.add(Row("inserted cassette, RSS", n: n, unit: .megabytes, samples: cassetteRSS.map { $0 / megabyte },
                      note: "VmRSS growth after malloc_trim"))
        if !floorPeak.isEmpty {
            table.add(Row("peak RSS, JSONSerialization (floor)", n: n, unit: .megabytes, samples: floorPeak.map { $0 / megabyte },
                          note: String(format: "VmHWM growth: %.2fx disk", Stats.median(floorPeak) / Double(disk))))
        }
        if !peak.isEmpty {
            table.add(Row("peak RSS while inserting", n: n, unit: .megabytes, samples: peak.map { $0 / megabyte },
                          note: String(format: "VmHWM growth: %.2fx disk (parse tree included)", Stats.median(peak) / Double(disk))))
        }
        ratios["memory_vs_disk"] = Stats.median(cassetteHeap) / Double(disk)
    }
}
