package nexmark

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// The model's constants, as the reference generator has them.
const (
	firstAuctionID  = 1000
	firstPersonID   = 1000
	firstCategoryID = 10
	numCategories   = 5
	personIDLead    = 10 // ids of people not yet created that a bid or auction may name
	auctionIDLead   = 10
	hotSellerBatch  = 100 // hot sellers, bidders and auctions are the first of each batch of 100
	hotBidderBatch  = 100
	hotAuctionBatch = 100
	hotChannelRatio = 2
	numChannels     = 10000
	minStringLength = 3

	numActivePeople     = 1000
	numInFlightAuctions = 100
	sineSteps           = 10
)

var (
	usStates   = strings.Split("AZ,CA,ID,OR,WA,WY", ",")
	usCities   = strings.Split("Phoenix,Los Angeles,San Francisco,Boise,Portland,Bend,Redmond,Seattle,Kent,Cheyenne", ",")
	firstNames = strings.Split("Peter,Paul,Luke,John,Saul,Vicky,Kate,Julie,Sarah,Deiter,Walter", ",")
	lastNames  = strings.Split("Shultz,Abrams,Spencer,White,Bartels,Walton,Smith,Jones,Noris", ",")
	hotChannel = []string{"Google", "Facebook", "Baidu", "Apple"}
)

// Event types, the values of the event_type column.
const (
	personEvent  = 0
	auctionEvent = 1
	bidEvent     = 2
)

// genConfig is what shapes the stream.
type genConfig struct {
	personProportion, auctionProportion, bidProportion int64
	avgPersonSize, avgAuctionSize, avgBidSize          int
	hotAuctionRatio, hotBiddersRatio, hotSellersRatio  int
	baseTime                                           time.Time // event time of event 0
	// The rate: each step lasts stepLength and has its own delay between events.
	stepLength time.Duration
	delaysUs   []float64
}

func (c *genConfig) total() int64 { return c.personProportion + c.auctionProportion + c.bidProportion }

// person is a new person; auction a new auction; bid a bid. Times are event times.
type person struct {
	id                                   int64
	name, email, creditCard, city, state string
	dateTime                             time.Time
	extra                                string
}

type auction struct {
	id                    int64
	itemName, description string
	initialBid, reserve   int64
	dateTime, expires     time.Time
	seller, category      int64
	extra                 string
}

type bid struct {
	auction, bidder, price int64
	channel, url           string
	dateTime               time.Time
	extra                  string
}

// event is one generated event: kind says which of p, a, b is set.
type event struct {
	kind int
	p    person
	a    auction
	b    bid
}

// generator produces event n from the configuration and n alone. seed mixes the event
// number into a PCG stream, so events are independent of the order they are made in.
type generator struct {
	cfg  genConfig
	pcg  rand.PCG
	rand *rand.Rand
	// epoch of the rate shape: all steps once
	eventsPerStep  []int64
	eventsPerEpoch int64
	epochLength    time.Duration
	urls           []string // the base urls of hot channels
	channelURLs    []string // the url of each other channel, made when first used
	channelNames   []string // and its name
	// letters is random lower-case letters that extras are cut from (see nextExtra)
	letters string
}

// lettersLen is the size of the generator's pool of random letters: extras are at most
// a few hundred bytes, so their starts spread over ~64k positions.
const lettersLen = 64 << 10

func newGenerator(cfg genConfig) *generator {
	g := &generator{cfg: cfg}
	g.rand = rand.New(&g.pcg)
	for _, d := range cfg.delaysUs {
		n := max(int64(float64(cfg.stepLength.Microseconds())/d), 1)
		g.eventsPerStep = append(g.eventsPerStep, n)
		g.eventsPerEpoch += n
		g.epochLength += cfg.stepLength
	}
	g.urls = make([]string, len(hotChannel))
	for i := range g.urls {
		g.reseed(uint64(1<<62) + uint64(i))
		g.urls[i] = g.baseURL()
	}
	g.reseed(uint64(1<<62) - 1)
	g.letters = exactString(g.rand, lettersLen)
	return g
}

func (g *generator) reseed(n uint64) { g.pcg.Seed(0x6e65786d61726b, n*0x9e3779b97f4a7c15+1) }

// timestamp returns the event time of event n, in milliseconds: events are spaced by
// the delay of the step of the rate shape they fall in.
func (g *generator) timestamp(n int64) time.Time {
	return g.offset(n).Truncate(time.Millisecond)
}

func (g *generator) offset(n int64) time.Time {
	if len(g.cfg.delaysUs) == 1 {
		return g.cfg.baseTime.Add(time.Duration(float64(n)*g.cfg.delaysUs[0]) * time.Microsecond)
	}
	epoch, rest := n/g.eventsPerEpoch, n%g.eventsPerEpoch
	t := g.cfg.baseTime.Add(time.Duration(epoch) * g.epochLength)
	for i, k := range g.eventsPerStep {
		if rest < k {
			return t.Add(time.Duration(float64(rest)*g.cfg.delaysUs[i]) * time.Microsecond)
		}
		rest -= k
		t = t.Add(g.cfg.stepLength)
	}
	return t
}

// event makes event n in e. Only the part of its kind is written (a whole event is
// ~400 bytes of pointers to copy, under the GC's write barrier): the others keep what
// an earlier event left there.
func (g *generator) event(n int64, e *event) {
	g.reseed(uint64(n))
	ts := g.timestamp(n)
	c := &g.cfg
	switch rem := n % c.total(); {
	case rem < c.personProportion:
		e.kind, e.p = personEvent, g.person(n, ts)
	case rem < c.personProportion+c.auctionProportion:
		e.kind, e.a = auctionEvent, g.auction(n, ts)
	default:
		e.kind, e.b = bidEvent, g.bid(n, ts)
	}
}

// lastPerson returns the id (base 0) of the last person created at or before event n.
func (g *generator) lastPerson(n int64) int64 {
	c := &g.cfg
	epoch, off := n/c.total(), n%c.total()
	if off >= c.personProportion {
		off = c.personProportion - 1
	}
	return epoch*c.personProportion + off
}

// lastAuction returns the id (base 0) of the last auction created at or before event n.
func (g *generator) lastAuction(n int64) int64 {
	c := &g.cfg
	epoch, off := n/c.total(), n%c.total()
	switch {
	case off < c.personProportion:
		epoch--
		off = c.auctionProportion - 1
	case off >= c.personProportion+c.auctionProportion:
		off = c.auctionProportion - 1
	default:
		off -= c.personProportion
	}
	return epoch*c.auctionProportion + off
}

// randomPerson picks one of the active people, or one of the next few to be created.
func (g *generator) randomPerson(n int64) int64 {
	people := g.lastPerson(n) + 1
	active := min(people, numActivePeople)
	return people - active + g.rand.Int64N(active+personIDLead)
}

// randomAuction picks one of the auctions likely still open, or one of the next few.
func (g *generator) randomAuction(n int64) int64 {
	last := g.lastAuction(n)
	lo := max(last-numInFlightAuctions, 0)
	return lo + g.rand.Int64N(last-lo+1+auctionIDLead)
}

func (g *generator) person(n int64, ts time.Time) person {
	p := person{id: g.lastPerson(n) + firstPersonID, dateTime: ts}
	p.name = pick(g.rand, firstNames) + " " + pick(g.rand, lastNames)
	p.email = g.nextString(7, ' ') + "@" + g.nextString(5, ' ') + ".com"
	var cc strings.Builder
	for i := 0; i < 4; i++ {
		if i > 0 {
			cc.WriteByte(' ')
		}
		s := strconv.Itoa(g.rand.IntN(10000))
		cc.WriteString(strings.Repeat("0", 4-len(s)) + s)
	}
	p.creditCard = cc.String()
	p.city = pick(g.rand, usCities)
	p.state = pick(g.rand, usStates)
	size := 8 + len(p.name) + len(p.email) + len(p.creditCard) + len(p.city) + len(p.state)
	p.extra = g.nextExtra(size, g.cfg.avgPersonSize)
	return p
}

func (g *generator) auction(n int64, ts time.Time) auction {
	c := &g.cfg
	a := auction{id: g.lastAuction(n) + firstAuctionID, dateTime: ts}
	if g.rand.IntN(c.hotSellersRatio) > 0 {
		a.seller = g.lastPerson(n) / hotSellerBatch * hotSellerBatch
	} else {
		a.seller = g.randomPerson(n)
	}
	a.seller += firstPersonID
	a.category = firstCategoryID + int64(g.rand.IntN(numCategories))
	a.initialBid = g.price()
	// An auction lasts, on average, until numInFlightAuctions more auctions have opened.
	ahead := numInFlightAuctions * c.total() / c.auctionProportion
	horizon := g.timestamp(n + ahead).Sub(ts).Milliseconds()
	a.expires = ts.Add(time.Duration(1+g.rand.Int64N(max(horizon*2, 1))) * time.Millisecond)
	a.itemName = g.nextString(20, ' ')
	a.description = g.nextString(100, ' ')
	a.reserve = a.initialBid + g.price()
	size := 8 + len(a.itemName) + len(a.description) + 8 + 8 + 8 + 8 + 8
	a.extra = g.nextExtra(size, c.avgAuctionSize)
	return a
}

func (g *generator) bid(n int64, ts time.Time) bid {
	c := &g.cfg
	b := bid{dateTime: ts}
	if g.rand.IntN(c.hotAuctionRatio) > 0 {
		b.auction = g.lastAuction(n) / hotAuctionBatch * hotAuctionBatch
	} else {
		b.auction = g.randomAuction(n)
	}
	b.auction += firstAuctionID
	if g.rand.IntN(c.hotBiddersRatio) > 0 {
		// The second person of the batch, so that hot bidders are not hot sellers.
		b.bidder = g.lastPerson(n)/hotBidderBatch*hotBidderBatch + 1
	} else {
		b.bidder = g.randomPerson(n)
	}
	b.bidder += firstPersonID
	b.price = g.price()
	if g.rand.IntN(hotChannelRatio) > 0 {
		i := g.rand.IntN(len(hotChannel))
		b.channel, b.url = hotChannel[i], g.urls[i]
	} else {
		ch := g.rand.IntN(numChannels)
		if g.channelURLs == nil {
			g.channelURLs = make([]string, numChannels)
			g.channelNames = make([]string, numChannels)
		}
		if g.channelURLs[ch] == "" {
			g.channelURLs[ch] = channelURL(ch)
			g.channelNames[ch] = "channel-" + strconv.Itoa(ch)
		}
		b.channel, b.url = g.channelNames[ch], g.channelURLs[ch]
	}
	b.extra = g.nextExtra(8+8+8+8, c.avgBidSize)
	return b
}

// channelURL returns the url of channel ch, the same on every call: nine channels in
// ten carry their id in the url.
func channelURL(ch int) string {
	var r rand.PCG
	r.Seed(0x75726c, uint64(ch))
	rr := rand.New(&r)
	u := baseURL(rr)
	if rr.IntN(10) > 0 {
		u += "&channel_id=" + strconv.FormatInt(int64(math.Abs(float64(reverse32(int32(ch))))), 10)
	}
	return u
}

func (g *generator) baseURL() string { return baseURL(g.rand) }

func baseURL(r *rand.Rand) string {
	return "https://www.nexmark.com/" + nextString(r, 5, '_') + "/" + nextString(r, 5, '_') + "/" +
		nextString(r, 5, '_') + "/item.htm?query=1"
}

func reverse32(v int32) int32 {
	u := uint32(v)
	var out uint32
	for i := 0; i < 32; i++ {
		out = out<<1 | u&1
		u >>= 1
	}
	return int32(out)
}

// price is 10^(6 u) * 100 for a uniform u: from 100 to 10^8, log-uniform.
func (g *generator) price() int64 {
	return int64(math.Round(math.Exp(g.rand.Float64()*6*math.Ln10) * 100))
}

func (g *generator) nextString(maxLen int, space byte) string {
	return nextString(g.rand, maxLen, space)
}

// nextString returns lower-case letters with about one space (or sep) in 13, of a
// random length in [3, maxLen), trimmed. One random number serves a character.
func nextString(r *rand.Rand, maxLen int, space byte) string {
	n := minStringLength + r.IntN(maxLen-minStringLength)
	b := make([]byte, n)
	for i := range b {
		if x := r.Uint32(); x%13 == 0 {
			b[i] = space
		} else {
			b[i] = byte('a' + (x/13)%26)
		}
	}
	// Trimmed in place: the string shares b, which nothing writes after.
	lo, hi := 0, n
	for lo < hi && b[lo] == ' ' {
		lo++
	}
	for hi > lo && b[hi-1] == ' ' {
		hi--
	}
	if lo == hi {
		return ""
	}
	return unsafe.String(&b[lo], hi-lo)
}

// nextExtra returns letters padding an event of size bytes to avg on average (within
// +-20%), or "" when the event is already larger.
func (g *generator) nextExtra(size, avg int) string {
	if size > avg {
		return ""
	}
	avg -= size
	delta := int(math.Round(float64(avg) * 0.2))
	n := avg - delta
	if delta > 0 {
		n += g.rand.IntN(2 * delta)
	}
	if n <= 0 {
		return ""
	}
	if n > len(g.letters)/2 {
		return exactString(g.rand, n)
	}
	// n random letters cut from the pool at a random start: one random number and no
	// allocation per event, where making them costs one number per 13 letters and
	// the event's largest allocation.
	at := g.rand.IntN(len(g.letters) - n + 1)
	return g.letters[at : at+n]
}

// exactString returns n random lower-case letters, 13 from each random number (26^13 <
// 2^64), as the reference takes several from each.
func exactString(r *rand.Rand, n int) string {
	if n <= 0 {
		return ""
	}
	b := make([]byte, n)
	for i := 0; i < n; {
		x := r.Uint64()
		for k := 0; k < 13 && i < n; k++ {
			b[i] = byte('a' + x%26)
			x /= 26
			i++
		}
	}
	return unsafe.String(&b[0], n) // b is not written after
}

func pick(r *rand.Rand, from []string) string { return from[r.IntN(len(from))] }

// cosStep is cos(2 pi i / n).
func cosStep(i, n int) float64 { return math.Cos(2 * math.Pi * float64(i) / float64(n)) }
