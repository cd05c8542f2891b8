import CassetteMutations
import Foundation
import Testing
@testable import HTTPVCR

extension VCRTests {
    /// The layout takes a shortcut for tapes in the usual order (a chapter's scenes together, numbers rising); every
    /// other order must come out as a plain lookup table would have it.
    @Suite struct ChapterLayoutTests {
        @Test func anyOrderOfChapterNumbersLaysOutAsATableWould() {
            var generator = SplitMix64(seed: 2_026_1125)
            for tapeIndex in 0..<2_000 {
                let count = generator.below(14)
                let numbers = [0, 1, 2, 3, 7, 8, Int(Int32.max)]
                let scenes = (0..<count).map { _ in
                    let number = numbers[generator.below(numbers.count)]
                    let isRequest = generator.below(3) != 0
                    return Scene(chapter: number, event: isRequest ? .request(RecordedRequest(method: "GET", url: "http://x/")) : .completion)
                }
                let layout = ChapterLayout(scenes: scenes)
                let expected = Reference(scenes)
                let chapters = scenes.map(\.chapter)
                #expect(layout.chapterOfScene == expected.chapterOfScene, "tape \(tapeIndex): \(chapters)")
                #expect(layout.scenesOfChapter == expected.scenesOfChapter, "tape \(tapeIndex): \(chapters)")
                #expect(layout.isLastOfChapter == expected.isLastOfChapter, "tape \(tapeIndex): \(chapters)")
                #expect(layout.chapterNumbers == Set(chapters), "tape \(tapeIndex): \(chapters)")
                #expect(layout.misplacedScene?.position == expected.misplacedScene?.position, "tape \(tapeIndex): \(chapters)")
                #expect(layout.misplacedScene?.chapter == expected.misplacedScene?.chapter, "tape \(tapeIndex): \(chapters)")
            }
        }

        /// What the layout was before the shortcut: a dictionary from chapter number to position, for every scene.
        private struct Reference {
            var chapterOfScene: [Int] = []
            var scenesOfChapter: [[Int]] = []
            var isLastOfChapter: [Bool] = []
            var misplacedScene: (position: Int, chapter: Int)?

            init(_ scenes: [Scene]) {
                var position: [Int: Int] = [:]
                for (index, scene) in scenes.enumerated() {
                    let chapter: Int
                    if let known = position[scene.chapter] {
                        chapter = known
                    } else {
                        let opensWithRequest = if case .request = scene.event { true } else { false }
                        if misplacedScene == nil, !opensWithRequest { misplacedScene = (index, scene.chapter) }
                        chapter = scenesOfChapter.count
                        position[scene.chapter] = chapter
                        scenesOfChapter.append([])
                    }
                    chapterOfScene.append(chapter)
                    scenesOfChapter[chapter].append(index)
                }
                isLastOfChapter = scenes.indices.map { index in scenesOfChapter.contains { $0.last == index } }
            }
        }
    }
}
