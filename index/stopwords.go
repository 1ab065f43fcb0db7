package index

import "github.com/reme-dev/reme/store"

// Stop words are dropped from natural-language queries (not from quoted
// phrases, and not when a query has nothing else).
var englishStop = store.WordSet(`a about above after again against all also am an and any are aren't as at be because been
before being below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
during each either else ever few for from further get gets got had hadn't has hasn't have haven't having he he'd
he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's
its itself just let's like may me might more most must mustn't my myself neither no nor not of off on once only or
other ought our ours ourselves out over own please same shall shan't she she'd she'll she's should shouldn't so some
such than that that's the their theirs them themselves then there there's these they they'd they'll they're they've
this those through to too under until up upon us very was wasn't we we'd we'll we're we've were weren't what what's
when when's where where's whether which while who who's whom whose why why's will with won't would wouldn't yet you
you'd you'll you're you've your yours yourself yourselves s t d ll m re ve tell know remember anything something
thing things`)

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
