extension RandomAccessCollection where Index == Int {
    /// The index of the first element for which `isAfter` holds, in a collection where it
    /// holds for a suffix (every element after one it holds for): binary search.
    package func partitionPoint(_ isAfter: (Element) throws -> Bool) rethrows -> Int {
        var low = startIndex
        var high = endIndex
        while low < high {
            let middle = low + (high - low) / 2
            if try isAfter(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
