package runrecord

import "strings"

// Nearest returns the name of names closest to s when s is plausibly a
// mistyping of it (same text but for case, or at most two edits for names
// longer than four letters, one otherwise), else "".
func Nearest(s string, names []string) string {
	best, bestDist := "", -1
	for _, n := range names {
		if strings.EqualFold(s, n) {
			return n
		}
		if len(s) > len(n)+8 || len(n) > len(s)+8 { // far beyond any limit: skip the distance (and a copy of a huge field)
			continue
		}
		d := editDistance(strings.ToLower(s), strings.ToLower(n))
		limit := 1
		if len(n) > 4 {
			limit = 2
		}
		if d <= limit && (bestDist < 0 || d < bestDist) {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the edit distance of a and b (bytes) counting a swap of
// two neighbouring letters as one edit ("rnu" is one edit from "run"), the
// commonest typing slip (optimal string alignment distance).
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
