/// Where each chapter of a tape is, worked out once: the match index, the player and the cassette all read it.
///
/// Chapters are numbered here by where their first scene comes on the tape (0, 1, 2, …), whatever numbers the file
/// gives them; a chapter's scenes are listed in tape order.
package struct ChapterLayout: Sendable {
    /// For each scene, the position of its chapter.
    package let chapterOfScene: [Int]
    /// For each chapter, the positions of its scenes in tape order.
    package let scenesOfChapter: [[Int]]
    /// For each scene, whether it is the last of its chapter.
    package let isLastOfChapter: [Bool]
    /// The number the file gives each chapter, by chapter position.
    let numberOfChapter: [Int]
    /// The first scene that opens a chapter without being its request, if one does: such a tape cannot be played.
    package let misplacedScene: (position: Int, chapter: Int)?

    package init(scenes: [Scene]) {
        var chapterOfScene: [Int] = []
        var scenesOfChapter: [[Int]] = []
        var numberOfChapter: [Int] = []
        var misplacedScene: (position: Int, chapter: Int)?
        chapterOfScene.reserveCapacity(scenes.count)
        // Tapes list a chapter's scenes together, and chapters in increasing numbers, as they are recorded: a scene
        // of the chapter before, or of a number above all before, needs no lookup. The lookup table is made only for
        // a number that comes back later (interleaved chapters, a file edited by hand).
        var position: [Int: Int]?
        var highest = Int.min
        // By index: binding each scene would copy it (a retain and a release of everything it holds).
        for index in scenes.indices {
            let number = scenes[index].chapter
            var known: Int?
            if let last = chapterOfScene.last, numberOfChapter[last] == number {
                known = last
            } else if number <= highest {
                if position == nil {
                    position = Dictionary(uniqueKeysWithValues: numberOfChapter.enumerated().map { ($1, $0) })
                }
                known = position?[number]
            }
            let chapter: Int
            if let known {
                chapter = known
            } else {
                if misplacedScene == nil, !Self.isRequest(scenes[index].event) { misplacedScene = (index, number) }
                chapter = scenesOfChapter.count
                position?[number] = chapter
                numberOfChapter.append(number)
                // Room for a request, its response, a body and the end, in one allocation.
                var positions: [Int] = []
                positions.reserveCapacity(4)
                scenesOfChapter.append(positions)
                highest = max(highest, number)
            }
            chapterOfScene.append(chapter)
            scenesOfChapter[chapter].append(index)
        }
        var isLastOfChapter = Array(repeating: false, count: scenes.count)
        for positions in scenesOfChapter {
            if let last = positions.last { isLastOfChapter[last] = true }
        }
        self.chapterOfScene = chapterOfScene
        self.scenesOfChapter = scenesOfChapter
        self.isLastOfChapter = isLastOfChapter
        self.numberOfChapter = numberOfChapter
        self.misplacedScene = misplacedScene
    }

    /// The chapter numbers the tape uses, which new chapters must not reuse.
    package var chapterNumbers: Set<Int> { Set(numberOfChapter) }

    package var chapterCount: Int { scenesOfChapter.count }

    private static func isRequest(_ event: Scene.Event) -> Bool {
        if case .request = event { return true }
        return false
    }

    /// Each chapter's request, in chapter order. Only for a tape without a ``misplacedScene``.
    package func requests(in scenes: [Scene]) -> [RecordedRequest] {
        scenesOfChapter.map { positions in
            guard case let .request(request) = scenes[positions[0]].event else {
                preconditionFailure("a chapter that does not open with its request: check misplacedScene first")
            }
            return request
        }
    }
}
