package main

// A generator of synthetic conversational QA data in LoCoMo's public JSON
// shape, for `reme eval`: pairs of friends chat over a few months of
// sessions; each has storylines (a new pet, a class, a trip, a job...) told
// across sessions among small talk, with the other friend's similar stories
// as distractors. Questions about each storyline ask for single facts, facts
// from two sessions, dates, inferences, and (adversarially) the same fact
// attributed to the wrong person. The wording of a question is written
// apart from the wording of the lines that answer it: sometimes the same
// words, often other forms of them (adopted / adoption), sometimes other
// words altogether, as people ask; the answer is often said in reply to the
// friend's question rather than in the line that names the topic.

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"
)

type locomoTurn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
}

type locomoQA struct {
	Question          string   `json:"question"`
	Answer            string   `json:"answer,omitempty"`
	AdversarialAnswer string   `json:"adversarial_answer,omitempty"`
	Evidence          []string `json:"evidence"`
	Category          int      `json:"category"`
}

type locomoSample struct {
	SampleID     string         `json:"sample_id"`
	Conversation map[string]any `json:"conversation"`
	QA           []locomoQA     `json:"qa"`
}

type person struct {
	name          string
	he, his, him  string
	relative, pal string
}

// line is one turn of an exchange: who says it (O the storyline's owner, F
// the friend), a template, and the facts it states.
type line struct {
	who   byte
	text  string
	facts []string
}

type question struct {
	cat   int
	text  string
	facts []string // evidence: the lines that stated these facts
}

type storyTmpl struct {
	topic string
	slots map[string][]string
	beats [][][]line // beat → alternative exchanges → lines
	qs    []question
}

type whenPhrase struct {
	text string
	days int
}

var whens = []whenPhrase{{"yesterday", 1}, {"last weekend", 3}, {"two days ago", 2}, {"last Friday", 4},
	{"last week", 7}, {"a few days ago", 3}, {"this past Sunday", 2}, {"on Tuesday", 2}}

var names = []struct{ name, g string }{
	{"Caroline", "f"}, {"Melanie", "f"}, {"Jon", "m"}, {"Gina", "f"}, {"John", "m"}, {"Maria", "f"}, {"Joanna", "f"},
	{"Nate", "m"}, {"Tim", "m"}, {"Audrey", "f"}, {"Andrew", "m"}, {"Deborah", "f"}, {"Evan", "m"}, {"Sam", "m"},
	{"Calvin", "m"}, {"Dave", "m"}, {"Priya", "f"}, {"Wei", "m"}, {"Lena", "f"}, {"Omar", "m"}, {"Sofia", "f"}, {"Kenji", "m"},
}

var petNames = []string{"Max", "Luna", "Biscuit", "Pepper", "Milo", "Daisy", "Oliver", "Coco", "Rocky", "Willow", "Ziggy", "Juniper"}
var peopleNames = []string{"Helen", "Marcus", "Rosa", "Frank", "Dana", "Ibrahim", "Greta", "Theo", "Yuki", "Leon", "Carmen", "Paul"}

// Each beat has a few ways to be told: the owner volunteering it in full,
// the friend asking and the owner answering in full, and (less often) an
// answer that leans on the friend's question for its subject, as real
// replies do ("Pepper! She already sits on command.").
var storyTmpls = []storyTmpl{
	{
		topic: "pet",
		slots: map[string][]string{"species": {"dog", "cat", "rabbit"}, "place": {"animal shelter", "rescue center", "local shelter"},
			"trick":  {"sits on command", "fetches the newspaper", "sleeps on my feet", "follows me everywhere"},
			"update": {"learned to roll over", "chewed up my favorite sneakers", "had a check-up at the vet and is perfectly healthy", "made friends with the neighbor's kids"}},
		beats: [][][]line{
			{
				{{'F', "Hey {O}! Anything new with you?", nil}, {'O', "Yes! We {adopted|brought home} a little {species} from the {place} {when}.", []string{"adopt", "place"}},
					{'F', "Aww, congrats! What's {his} name?", nil}, {'O', "{petname}! {He} already {trick}.", []string{"name"}}},
				{{'O', "Guess what, I finally did it. I adopted a {species} from the {place} {when}.", []string{"adopt", "place"}},
					{'F', "No way, that's amazing! Send pictures!", nil}, {'O', "I will! I named my {species} {petname}, after a character in my favorite show.", []string{"name"}}},
				{{'O', "Meet the newest member of the family: a {species} named {petname}! We got {him} from the {place} {when}.", []string{"adopt", "place", "name"}},
					{'F', "Oh my gosh, {petname} is adorable.", nil}},
			},
			{
				{{'F', "How is {petname} settling in?", nil}, {'O', "So well! {He} {update}.", []string{"update"}}},
				{{'O', "Little update on my {species}: {petname} {update}.", []string{"update"}}, {'F', "Haha, sounds like a handful.", nil}},
			},
		},
		qs: []question{
			{4, "What kind of pet did {O} adopt?", []string{"adopt"}},
			{4, "What is the name of {O}'s {species}?", []string{"name"}},
			{4, "Where did {O} get {his} {species} from?", []string{"place"}},
			{2, "When did {O} adopt {petname}?", []string{"adopt"}},
			{1, "What did {petname} do after {O} adopted {him}?", []string{"update", "adopt"}},
			{3, "Would {O} probably enjoy a {species} cafe?", []string{"adopt"}},
			{5, "What is the name of {F}'s {species}?", []string{"name"}},
		},
	},
	{
		topic: "class",
		slots: map[string][]string{"activity": {"pottery", "watercolor painting", "salsa dancing", "woodworking", "photography"},
			"venue": {"community center", "art studio downtown", "library"}, "teacher": peopleNames,
			"project": {"a lopsided bowl", "a portrait of my grandmother", "a small stool", "a series of sunset shots"},
			"reason":  {"my therapist said a creative outlet would help with stress", "I wanted something to do with my hands after work", "my mom always did it and I wanted to feel close to her"}},
		beats: [][][]line{
			{
				{{'O', "I signed up for a {activity} class at the {venue} {when}.", []string{"start", "venue"}}, {'F', "Oh fun! What made you want to try that?", nil},
					{'O', "Honestly, {reason}.", []string{"reason"}}},
				{{'F', "What have you been up to lately?", nil}, {'O', "I started taking {activity} lessons {when}, twice a week at the {venue}.", []string{"start", "venue"}},
					{'F', "That sounds relaxing.", nil}, {'O', "It is. I took up {activity} because {reason}.", []string{"reason"}}},
			},
			{
				{{'O', "In {activity} class this week I made {project}! {teacher}, my instructor, says I'm a natural.", []string{"project", "teacher"}}, {'F', "I'd love to see it!", nil}},
				{{'F', "How's the {activity} going?", nil}, {'O', "Great, I just finished {project}.", []string{"project"}}, {'F', "Who teaches it?", nil},
					{'O', "A lovely person named {teacher}, very patient with beginners.", []string{"teacher"}}},
				{{'O', "My {activity} teacher {teacher} loved {project}, the thing I made this week.", []string{"project", "teacher"}}},
			},
		},
		qs: []question{
			{4, "What class did {O} start taking?", []string{"start"}},
			{4, "Where does {O} take {his} {activity} lessons?", []string{"venue"}},
			{4, "Who is {O}'s {activity} teacher?", []string{"teacher"}},
			{4, "What did {O} create in {his} {activity} course?", []string{"project"}},
			{2, "When did {O} sign up for {activity}?", []string{"start"}},
			{3, "Why did {O} decide to take up {activity}?", []string{"reason"}},
			{1, "What did {O} make after joining the class at the {venue}?", []string{"project", "venue"}},
			{5, "Who is {F}'s {activity} instructor?", []string{"teacher"}},
		},
	},
	{
		topic: "trip",
		slots: map[string][]string{"dest": {"Lisbon", "Yosemite", "Kyoto", "the Outer Banks", "Montreal", "Iceland"},
			"companion": {"my sister", "my college roommate", "my partner", "two friends from work"},
			"activity":  {"hiked", "went kayaking", "ate our way through the food markets", "visited museums"},
			"souvenir":  {"a hand-painted tile", "a wool sweater", "a jar of local honey", "a tiny ceramic cat"}},
		beats: [][][]line{
			{
				{{'F', "Did you end up going anywhere this summer?", nil}, {'O', "Yes! I went to {dest} with {companion} {when}.", []string{"trip", "companion"}},
					{'F', "Jealous! What did you do there?", nil}, {'O', "We {activity} almost every day, it was perfect.", []string{"activity"}}},
				{{'O', "Just got back from my trip to {dest}! {companion} and I {activity} the whole time.", []string{"trip", "companion", "activity"}}, {'F', "Welcome back, that sounds incredible.", nil}},
				{{'O', "{companion} and I took a vacation to {dest} {when}.", []string{"trip", "companion"}}, {'F', "How was it?", nil},
					{'O', "Amazing, in {dest} we {activity} every day.", []string{"activity"}}},
			},
			{
				{{'O', "I brought back {souvenir} from {dest} for my {relative}.", []string{"souvenir"}}, {'F', "That's so thoughtful.", nil}},
				{{'F', "Did you get any souvenirs on your trip?", nil}, {'O', "Just {souvenir}, it's on my desk now.", []string{"souvenir"}}},
			},
		},
		qs: []question{
			{4, "Where did {O} go on vacation?", []string{"trip"}},
			{4, "Who did {O} travel to {dest} with?", []string{"companion"}},
			{4, "What did {O} and {his} companion do during the trip?", []string{"activity"}},
			{4, "What souvenir did {O} bring home from {dest}?", []string{"souvenir"}},
			{2, "When did {O} visit {dest}?", []string{"trip"}},
			{1, "Who went to {dest} with {O} and what did they do there?", []string{"companion", "activity"}},
			{5, "Where did {F} travel with {companion}?", []string{"trip"}},
		},
	},
	{
		topic: "job",
		slots: map[string][]string{"company": {"Brightline", "Northwind Labs", "Cedar Health", "Pixelforge", "Blue Harbor Bank"},
			"role": {"data analyst", "product designer", "nurse manager", "software engineer", "marketing lead"}, "boss": peopleNames,
			"wproject": {"a new patient app", "the year-end report", "redesigning the checkout flow", "migrating old servers"}},
		beats: [][][]line{
			{
				{{'O', "Big news: I got a job offer from {company} {when}!", []string{"offer"}}, {'F', "Congrats!! What's the position?", nil},
					{'O', "{role}. It's a step up from what I was doing.", []string{"role"}}},
				{{'F', "Any luck with the job hunt?", nil}, {'O', "Actually yes, {company} offered me a {role} position {when}.", []string{"offer", "role"}},
					{'F', "That's huge, well deserved.", nil}},
				{{'O', "I accepted the {role} job at {company}, they called me {when}.", []string{"offer", "role"}}, {'F', "So happy for you!", nil}},
			},
			{
				{{'O', "First weeks at {company} are intense. My manager {boss} put me on {wproject}.", []string{"boss", "wproject"}}, {'F', "Sounds like they trust you already.", nil}},
				{{'F', "How's the new job treating you?", nil}, {'O', "Busy! I'm working on {wproject} and reporting to {boss}, who is great.", []string{"wproject", "boss"}}},
			},
		},
		qs: []question{
			{4, "Which company hired {O}?", []string{"offer"}},
			{4, "What is {O}'s new job title?", []string{"role"}},
			{4, "Who is {O}'s manager at {company}?", []string{"boss"}},
			{4, "What is {O} working on at {his} new job?", []string{"wproject"}},
			{2, "When did {O} receive the job offer?", []string{"offer"}},
			{1, "What project did {O} get after being offered the {role} role?", []string{"wproject", "role"}},
			{3, "Is {O} likely happy about {his} career change?", []string{"role"}},
			{5, "Which company hired {F}?", []string{"offer"}},
		},
	},
	{
		topic: "race",
		slots: map[string][]string{"race": {"half marathon", "10K", "trail race", "triathlon"}, "city": {"Denver", "Portland", "Austin", "Chicago"},
			"finish": {"two hours and five minutes", "fifty-two minutes", "under three hours"}, "injury": {"a sore knee", "shin splints", "a sprained ankle"}},
		beats: [][][]line{
			{
				{{'O', "I'm training for the {race} in {city}, running four mornings a week now.", []string{"training"}}, {'F', "Wow, dedication! How far do you go?", nil},
					{'O', "Up to ten miles on Sundays. My legs hate me.", nil}},
				{{'F', "Still doing your morning runs?", nil}, {'O', "Yep, I registered for the {race} in {city}, so no excuses now.", []string{"training"}}},
			},
			{
				{{'O', "I finished the {race} {when}! My time was {finish}.", []string{"finish"}}, {'F', "That's incredible, congratulations!", nil}},
				{{'F', "How did the race go?", nil}, {'O', "I crossed the line in {finish}, despite {injury}.", []string{"finish", "injury"}}},
				{{'O', "Ran the {race} in {city} {when}, {finish}, with {injury} the whole way.", []string{"finish", "injury"}}},
			},
		},
		qs: []question{
			{4, "What race was {O} training for?", []string{"training"}},
			{4, "How long did it take {O} to complete the {race}?", []string{"finish"}},
			{2, "When did {O} run the {race} in {city}?", []string{"finish"}},
			{1, "Where was the race {O} trained for and what was {his} finishing time?", []string{"training", "finish"}},
			{3, "Does {O} enjoy staying active?", []string{"training"}},
			{5, "What was {F}'s time in the {race}?", []string{"finish"}},
		},
	},
	{
		topic: "family",
		slots: map[string][]string{"event": {"wedding", "baby shower", "graduation", "fiftieth anniversary party"},
			"who": {"sister", "brother", "cousin", "parents"}, "venue": {"a vineyard", "the lake house", "a barn outside town", "their backyard"},
			"gift": {"a photo album", "a handmade quilt", "a framed map of where they met"}},
		beats: [][][]line{
			{
				{{'O', "My {who}'s {event} was {when}, at {venue}. I cried the whole time.", []string{"event", "venue"}}, {'F', "That sounds beautiful!", nil}},
				{{'F', "How was the family thing?", nil}, {'O', "My {who}'s {event} was lovely. They held it at {venue}.", []string{"event", "venue"}}, {'F', "Sounds perfect.", nil}},
			},
			{
				{{'O', "I gave them {gift} for the {event}, they loved it.", []string{"gift"}}},
				{{'F', "What did you end up getting them?", nil}, {'O', "I made {gift}. Took me weeks!", []string{"gift"}}},
			},
		},
		qs: []question{
			{4, "Where was the {event} of {O}'s {who} held?", []string{"venue"}},
			{4, "What gift did {O} give for the {event}?", []string{"gift"}},
			{2, "When did {O} attend {his} {who}'s {event}?", []string{"event"}},
			{1, "What did {O} give at the family celebration held at {venue}?", []string{"gift", "venue"}},
			{5, "What did {F} give {his} {who}?", []string{"gift"}},
		},
	},
	{
		topic: "volunteer",
		slots: map[string][]string{"org": {"food bank", "animal shelter", "literacy program", "community garden"},
			"task":   {"sorting donations", "walking the dogs", "tutoring kids in reading", "running the Saturday market stall"},
			"moment": {"a little girl read her first full book to me", "we packed four hundred meals in one morning", "a dog I'd walked for months finally got adopted"}},
		beats: [][][]line{
			{
				{{'O', "I started volunteering at the {org} {when}, mostly {task}.", []string{"volunteer", "task"}}, {'F', "That's really kind of you.", nil}},
				{{'F', "What do you do on weekends these days?", nil}, {'O', "Saturdays I volunteer at the {org}, {task}.", []string{"volunteer", "task"}}},
			},
			{
				{{'O', "Best moment volunteering at the {org} so far: {moment}.", []string{"moment"}}, {'F', "That gave me chills.", nil}},
				{{'F', "Still helping out on Saturdays?", nil}, {'O', "Yes, and {moment}. It made my month.", []string{"moment"}}},
			},
		},
		qs: []question{
			{4, "Where does {O} volunteer?", []string{"volunteer"}},
			{4, "What does {O} do as a volunteer?", []string{"task"}},
			{2, "When did {O} begin volunteering?", []string{"volunteer"}},
			{1, "What memorable thing happened while {O} was helping at the {org}?", []string{"moment", "volunteer"}},
			{3, "Would {O} describe {him}self as someone who likes helping others?", []string{"volunteer"}},
		},
	},
	{
		topic: "cooking",
		slots: map[string][]string{"dish": {"lasagna", "dumplings", "paella", "banana bread", "chicken curry"},
			"source": {"my grandmother's recipe card", "a cooking show", "a street vendor in Mexico City"},
			"guests": {"eight people", "my whole team", "the neighbors"}, "secret": {"a pinch of cinnamon", "brown butter", "smoked paprika"}},
		beats: [][][]line{
			{
				{{'O', "I've been perfecting my {dish}, based on {source}.", []string{"dish", "source"}}, {'F', "Yum. What's the secret?", nil},
					{'O', "{secret}, don't tell anyone.", []string{"secret"}}},
				{{'F', "Cooked anything good lately?", nil}, {'O', "{dish}! The recipe came from {source}, the secret ingredient is {secret}.", []string{"dish", "source", "secret"}}},
			},
			{
				{{'O', "I hosted a dinner party {when} for {guests} and served my {dish}.", []string{"dinner"}}, {'F', "I'm still waiting for my invite!", nil}},
			},
		},
		qs: []question{
			{4, "What dish has {O} been perfecting?", []string{"dish"}},
			{4, "Where did {O} get the recipe for {his} {dish}?", []string{"source"}},
			{4, "What is the secret ingredient in {O}'s {dish}?", []string{"secret"}},
			{2, "When did {O} host the dinner party?", []string{"dinner"}},
			{1, "Who did {O} cook {his} {dish} for?", []string{"dinner", "dish"}},
			{5, "What is {F}'s secret ingredient?", []string{"secret"}},
		},
	},
	{
		topic: "music",
		slots: map[string][]string{"instrument": {"guitar", "cello", "piano", "ukulele"}, "song": {"Wonderwall", "Clair de Lune", "Hallelujah", "Here Comes the Sun"},
			"gig": {"an open mic night", "the church fundraiser", "a friend's birthday party"}},
		beats: [][][]line{
			{
				{{'O', "I bought a used {instrument} {when} and I'm teaching myself with videos.", []string{"instrument"}}, {'F', "Ooh, what are you learning first?", nil},
					{'O', "{song}. Slowly!", []string{"song"}}},
				{{'F', "Picked up any new hobbies?", nil}, {'O', "The {instrument}! I can almost play {song}.", []string{"instrument", "song"}}},
			},
			{
				{{'O', "I played {song} on my {instrument} at {gig} and only messed up twice.", []string{"gig"}}, {'F', "You performed?! I'm so proud.", nil}},
			},
		},
		qs: []question{
			{4, "What instrument is {O} learning?", []string{"instrument"}},
			{4, "Which song is {O} practicing?", []string{"song"}},
			{4, "Where did {O} perform?", []string{"gig"}},
			{2, "When did {O} buy {his} {instrument}?", []string{"instrument"}},
			{1, "What did {O} play at {gig} on the instrument {he} taught {him}self?", []string{"gig", "instrument"}},
			{5, "What instrument is {F} learning?", []string{"instrument"}},
		},
	},
	{
		topic: "book",
		slots: map[string][]string{"title": {"The Night Circus", "Project Hail Mary", "Pachinko", "Circe", "The Overstory"},
			"club": {"my book club", "a reading group at work"}, "opinion": {"the ending made me sob", "the middle dragged but the last chapters were brilliant", "it changed how I think about trees"}},
		beats: [][][]line{
			{
				{{'O', "I'm reading {title} for {club}.", []string{"reading"}}, {'F', "Is it any good?", nil}, {'O', "So far yes, {opinion}.", []string{"opinion"}}},
				{{'F', "Reading anything?", nil}, {'O', "{title}, {club} picked it. Honestly {opinion}.", []string{"reading", "opinion"}}},
			},
		},
		qs: []question{
			{4, "What book is {O} reading?", []string{"reading"}},
			{4, "What did {O} think of {title}?", []string{"opinion"}},
			{3, "Does {O} belong to a reading group?", []string{"reading"}},
			{5, "What book is {F} reading for {club}?", []string{"reading"}},
		},
	},
	{
		topic: "move",
		slots: map[string][]string{"hood": {"Riverside", "the Old Town", "Maple Heights", "the Arts District"},
			"roommate": peopleNames, "feature": {"a tiny balcony with a view of the river", "a huge kitchen", "a claw-foot bathtub"}},
		beats: [][][]line{
			{
				{{'O', "I finally moved {when}! New apartment in {hood}.", []string{"moved"}}, {'F', "How do you like it?", nil},
					{'O', "Love it. It has {feature}.", []string{"feature"}}},
				{{'F', "Are you all settled in the new place?", nil}, {'O', "Almost, still boxes everywhere. But {hood} is lovely and the apartment has {feature}.", []string{"moved", "feature"}}},
			},
			{
				{{'O', "My new roommate {roommate} moved in, we get along great.", []string{"roommate"}}},
				{{'F', "Do you live alone there?", nil}, {'O', "No, with {roommate}, a friend of a friend.", []string{"roommate"}}},
			},
		},
		qs: []question{
			{4, "Which neighborhood did {O} move to?", []string{"moved"}},
			{4, "What does {O} like about the new apartment?", []string{"feature"}},
			{4, "Who does {O} live with?", []string{"roommate"}},
			{2, "When did {O} move into the new place?", []string{"moved"}},
			{5, "Which neighborhood did {F} move to?", []string{"moved"}},
		},
	},
	{
		topic: "garden",
		slots: map[string][]string{"crop": {"tomatoes", "zucchini", "strawberries", "basil"}, "pest": {"slugs", "aphids", "a very bold squirrel"},
			"fix": {"copper tape around the beds", "a homemade garlic spray", "a net over everything"}},
		beats: [][][]line{
			{
				{{'O', "I planted {crop} in the backyard garden {when}.", []string{"planted"}}, {'F', "You have a green thumb now?", nil}, {'O', "We'll see, so far so good.", nil}},
			},
			{
				{{'O', "Something has been eating my {crop}. Turns out it's {pest}.", []string{"pest"}}, {'F', "Oh no! What are you doing about it?", nil},
					{'O', "Trying {fix}.", []string{"fix"}}},
				{{'O', "The {pest} keep attacking my garden, so I'm trying {fix}.", []string{"pest", "fix"}}},
			},
		},
		qs: []question{
			{4, "What is {O} growing in {his} garden?", []string{"planted"}},
			{4, "What was damaging {O}'s plants?", []string{"pest"}},
			{4, "How did {O} deal with the {pest}?", []string{"fix"}},
			{1, "What attacked the vegetables {O} planted, and what did {he} try?", []string{"pest", "fix"}},
			{2, "When did {O} plant {crop}?", []string{"planted"}},
		},
	},
}

var smallTalk = []string{
	"Work has been nonstop this week, I barely had time to breathe.",
	"The weather has been so strange lately, sunny one day and pouring the next.",
	"I finally caught up on sleep this weekend.",
	"Did you watch the game on Sunday?",
	"My phone screen cracked again, classic me.",
	"I've been trying to drink more water, it's harder than it sounds.",
	"Traffic this morning was a nightmare.",
	"I made way too much coffee today.",
	"We should get lunch sometime soon.",
	"My neighbor's dog barked all night, I'm exhausted.",
	"I started a new show, can't stop watching it.",
	"My sister called, she says hi.",
	"I keep meaning to clean out my closet.",
	"The farmers market was packed this weekend.",
	"I'm thinking about taking a trip somewhere warm this winter.",
	"Our office is doing a step challenge, I'm losing badly.",
}

var reactions = []string{"That's awesome!", "Wow, good for you.", "Haha, I love that.", "Oh no, that sounds rough.", "Totally.",
	"Ha, same here.", "That makes sense.", "I hear you.", "Oh nice!", "You always surprise me."}

var greetings = []string{"Hey {F}! How have you been?", "Hi {F}, long time no talk!", "Morning {F}! Got a minute to catch up?", "Hey! How's your week going, {F}?"}
var greetReplies = []string{"Hey {O}! Pretty good, just busy. You?", "Hi! Doing well, thanks. What's new?", "Good to hear from you, {O}!"}
var closings = []string{"Anyway, I have to run. Talk soon!", "Let's catch up again next week.", "Take care, {F}!", "Okay, gotta go cook dinner. Bye!"}

// story is one storyline of one person in one conversation.
type story struct {
	tmpl   *storyTmpl
	owner  *person
	friend *person
	slots  map[string]string
	beats  []int               // session of each beat
	facts  map[string][]string // fact → dia_ids
}

func newPerson(r *rand.Rand, used map[string]bool) *person {
	for {
		n := names[r.IntN(len(names))]
		if used[n.name] {
			continue
		}
		used[n.name] = true
		p := &person{name: n.name, he: "she", his: "her", him: "her"}
		if n.g == "m" {
			p.he, p.his, p.him = "he", "his", "him"
		}
		p.relative = []string{"mom", "dad", "aunt", "grandpa", "best friend"}[r.IntN(5)]
		return p
	}
}

// fill replaces {slot}, {O}, {F}, pronouns and {a|b} choices.
func (s *story) fill(r *rand.Rand, t string, when string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			b.WriteString(t)
			break
		}
		j := strings.IndexByte(t[i:], '}')
		if j < 0 {
			b.WriteString(t)
			break
		}
		b.WriteString(t[:i])
		key := t[i+1 : i+j]
		t = t[i+j+1:]
		var v string
		switch {
		case strings.Contains(key, "|"):
			alts := strings.Split(key, "|")
			v = alts[r.IntN(len(alts))]
		case key == "O":
			v = s.owner.name
		case key == "F":
			v = s.friend.name
		case key == "he", key == "his", key == "him", key == "He", key == "His":
			v = map[string]string{"he": s.owner.he, "his": s.owner.his, "him": s.owner.him}[strings.ToLower(key)]
			if key[0] == 'H' {
				v = strings.ToUpper(v[:1]) + v[1:]
			}
		case key == "when":
			v = when
		case key == "relative":
			v = s.owner.relative
		default:
			v = s.slots[key]
		}
		b.WriteString(v)
	}
	out := b.String()
	if out != "" {
		out = strings.ToUpper(out[:1]) + out[1:]
	}
	return out
}

// locomoOptions configure the conversational data.
type locomoOptions struct {
	conversations int
	seed          uint64
}

func generateLocomo(w io.Writer, o locomoOptions) (int, error) {
	r := rand.New(rand.NewPCG(o.seed, 0x10c0))
	var samples []locomoSample
	questions := 0
	for c := 0; c < o.conversations; c++ {
		s := conversation(r, c)
		questions += len(s.QA)
		samples = append(samples, s)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return questions, enc.Encode(samples)
}

func conversation(r *rand.Rand, idx int) locomoSample {
	used := map[string]bool{}
	a, b := newPerson(r, used), newPerson(r, used)
	nSessions := 16 + r.IntN(8)
	// Each friend lives a few storylines; some topics both live (the
	// other's story is then a distractor for questions about one).
	var stories []*story
	for _, pair := range [][2]*person{{a, b}, {b, a}} {
		perm := r.Perm(len(storyTmpls))
		for _, k := range perm[:5+r.IntN(2)] {
			t := &storyTmpls[k]
			st := &story{tmpl: t, owner: pair[0], friend: pair[1], slots: map[string]string{}, facts: map[string][]string{}}
			for _, slot := range slices.Sorted(maps.Keys(t.slots)) { // in order: the same seed, the same data
				opts := t.slots[slot]
				st.slots[slot] = opts[r.IntN(len(opts))]
			}
			st.slots["petname"] = petNames[r.IntN(len(petNames))]
			first := r.IntN(nSessions - len(t.beats))
			st.beats = append(st.beats, first)
			for i := 1; i < len(t.beats); i++ {
				prev := st.beats[i-1]
				st.beats = append(st.beats, prev+1+r.IntN(max(1, (nSessions-prev-1)/2)))
				if st.beats[i] >= nSessions {
					st.beats[i] = nSessions - 1
				}
			}
			stories = append(stories, st)
		}
	}
	conv := map[string]any{"speaker_a": a.name, "speaker_b": b.name}
	day := time.Date(2023, time.Month(1+r.IntN(6)), 1+r.IntN(28), 0, 0, 0, 0, time.UTC)
	for sn := 0; sn < nSessions; sn++ {
		day = day.AddDate(0, 0, 3+r.IntN(12))
		at := day.Add(time.Duration(8+r.IntN(13))*time.Hour + time.Duration(r.IntN(60))*time.Minute)
		key := fmt.Sprintf("session_%d", sn+1)
		conv[key+"_date_time"] = strings.ToLower(at.Format("3:04 pm")) + " on " + at.Format("2 January, 2006")
		var turns []locomoTurn
		say := func(p *person, text string) string {
			id := fmt.Sprintf("D%d:%d", sn+1, len(turns)+1)
			turns = append(turns, locomoTurn{Speaker: p.name, DiaID: id, Text: text})
			return id
		}
		first, second := a, b
		if r.IntN(2) == 1 {
			first, second = b, a
		}
		greet := &story{owner: first, friend: second}
		say(first, greet.fill(r, greetings[r.IntN(len(greetings))], ""))
		say(second, greet.fill(r, greetReplies[r.IntN(len(greetReplies))], ""))
		var due []*story
		var beatOf []int
		for _, st := range stories {
			for bi, s := range st.beats {
				if s == sn {
					due = append(due, st)
					beatOf = append(beatOf, bi)
				}
			}
		}
		order := r.Perm(len(due))
		for _, k := range order {
			st, bi := due[k], beatOf[k]
			alts := st.tmpl.beats[bi]
			ex := alts[r.IntN(len(alts))]
			wp := whens[r.IntN(len(whens))]
			for _, ln := range ex {
				speaker := st.owner
				if ln.who == 'F' {
					speaker = st.friend
				}
				id := say(speaker, st.fill(r, ln.text, wp.text))
				for _, f := range ln.facts {
					st.facts[f] = append(st.facts[f], id)
				}
			}
			// chatter between topics
			for n := r.IntN(3); n > 0; n-- {
				p := a
				if r.IntN(2) == 1 {
					p = b
				}
				if r.IntN(2) == 0 {
					say(p, smallTalk[r.IntN(len(smallTalk))])
				} else {
					say(p, reactions[r.IntN(len(reactions))])
				}
			}
		}
		for n := 1 + r.IntN(3); n > 0; n-- {
			p := a
			if r.IntN(2) == 1 {
				p = b
			}
			say(p, smallTalk[r.IntN(len(smallTalk))])
			other := b
			if p == b {
				other = a
			}
			say(other, reactions[r.IntN(len(reactions))])
		}
		closer := &story{owner: second, friend: first}
		say(second, closer.fill(r, closings[r.IntN(len(closings))], ""))
		conv[key] = turns
	}
	var qa []locomoQA
	for _, st := range stories {
		for _, q := range st.tmpl.qs {
			var ev []string
			ok := true
			for _, f := range q.facts {
				ids := st.facts[f]
				if len(ids) == 0 {
					ok = false
					break
				}
				ev = append(ev, ids[0])
			}
			if !ok {
				continue
			}
			sort.Strings(ev)
			ev = dedupe(ev)
			item := locomoQA{Question: st.fill(r, q.text, ""), Evidence: ev, Category: q.cat}
			if q.cat == 5 {
				item.AdversarialAnswer = "Not mentioned in the conversation"
			}
			qa = append(qa, item)
		}
	}
	return locomoSample{SampleID: fmt.Sprintf("conv-%d", idx+1), Conversation: conv, QA: qa}
}

func dedupe(ss []string) []string {
	var out []string
	for i, s := range ss {
		if i == 0 || s != ss[i-1] {
			out = append(out, s)
		}
	}
	return out
}
