/** What `repetition_detection` asks for (docs/inference.md §8). */
export type RepetitionRule = { minSize: number; maxSize: number; minCount: number }

/** Whether the output ends in a pattern repeated `minCount` times (docs/inference.md §8; output tokens only). */
export function isRepetitive(tokens: readonly number[], rule: RepetitionRule): boolean {
  for (let size = rule.minSize; size <= rule.maxSize; size++) {
    if (size * rule.minCount > tokens.length) return false
    const end = tokens.length
    let repeated = true
    for (let block = 1; block < rule.minCount && repeated; block++) {
      for (let i = 0; i < size; i++) {
        if (tokens[end - 1 - i] !== tokens[end - 1 - i - block * size]) {
          repeated = false
          break
        }
      }
    }
    if (repeated) return true
  }
  return false
}
