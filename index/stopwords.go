package index

import "github.com/reme-dev/reme/store"

// cjkStopWords are function words that would match almost every Chinese
// note; bigrams equal to one of them are dropped.
var cjkStopWords = store.WordSet(`我们 你们 他们 她们 它们 咱们 大家 自己 什么 怎么 怎样 如何 为什么 哪些 哪个 哪里 这个 那个
这些 那些 这样 那样 这里 那里 一个 一些 一下 一直 有没 没有 关于 对于 因为 所以 但是 而且 或者 以及 还是 如果 虽然
然后 之后 之前 可以 应该 需要 已经 曾经 是否 是不 不是 就是 还有 时候 的话 记得 知道 告诉 请问 一下 我的 你的 他的`)

// cjkStopChars are particles; a bigram containing one is dropped (they
// glue words together rather than carry meaning).
var cjkStopChars = runeSet("的了吗呢吧啊么呀哦嘛")

func runeSet(s string) map[rune]bool {
	m := map[rune]bool{}
	for _, r := range s {
		m[r] = true
	}
	return m
}
