package index

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Lists of term ids come back as written, whichever encoding is shorter.
func TestChunkTermIDs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := [][]int64{{1}, {8}, {9}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {300}, {1, 1000000}}
	for i := 0; i < 200; i++ {
		max := 1 + rng.IntN(3000)
		var ids []int64
		for id := 1; id <= max; id++ {
			if rng.IntN(max/(1+rng.IntN(50))+1) == 0 {
				ids = append(ids, int64(id))
			}
		}
		if len(ids) > 0 {
			cases = append(cases, ids)
		}
	}
	bitmaps := 0
	for _, ids := range cases {
		b := encodeIDs([]byte("x"), ids)[1:]
		if b[0] == 0 {
			bitmaps++
		}
		got, err := decodeIDs(nil, b)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, ids) {
			t.Fatalf("%v came back as %v", ids, got)
		}
	}
	if bitmaps == 0 || bitmaps == len(cases) {
		t.Errorf("%d bitmaps among %d lists", bitmaps, len(cases))
	}
	if _, err := decodeIDs(nil, []byte{0x80}); err == nil {
		t.Error("a truncated list decoded")
	}
}
