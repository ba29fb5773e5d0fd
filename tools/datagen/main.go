// Command datagen writes the replbench accounts dataset as TSV, deterministically from a seed.
//
// Names and cities are drawn from syllable-built vocabularies with a Zipf-like long tail (a few very common
// names, many rare ones), so that name prefixes repeat like real ones. Rows are generated in fixed-size
// chunks, each from its own PRNG stream (seed, chunk), so the output is the same whatever the worker count.
//
//	datagen -rows 8000000 -seed 42 -out accounts.tsv
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

const (
	chunkRows      = 100_000
	firstNameCount = 40_000
	lastNameCount  = 100_000
	cityCount      = 3_000
)

var (
	onsets     = strings.Fields("b br c ch d dr f g gr h j k kr l m n p pr r s sh st t tr v w z el an ar is or al em")
	vowels     = strings.Fields("a e i o u a e i o ia ea ai ou y")
	firstTails = strings.Fields("na la ra n s l m th lyn ton ia ie o a el en ra us an ette ine er")
	lastTails  = strings.Fields("son sen ez es er ard ing ley ton man berg stein ski ova ic elli etti aud ier os ides oglu ov ch")
	cityTails  = strings.Fields("ville burg ton field ford port mouth polis grad dorf stad haven wick bridge by mont")
	interests  = strings.Fields("music movies books travel cooking hiking running cycling swimming chess gaming " +
		"photography painting dancing yoga football tennis basketball climbing gardening fishing history science " +
		"technology fashion theatre poetry cars coffee wine languages astronomy volunteering meditation surfing " +
		"skiing knitting baking podcasts anime")
	domains = strings.Fields("example.com mail.test inbox.test post.example webmail.test example.org")
)

// vocab is a list of unique words with a cumulative Zipf-like weight table for sampling.
type vocab struct {
	words []string
	cum   []float64
}

func buildVocab(rng *rand.Rand, n int, tails []string, syllables int, skewK, skewS float64) vocab {
	seen := make(map[string]bool, n)
	words := make([]string, 0, n)
	for len(words) < n {
		var b strings.Builder
		parts := 1 + rng.IntN(syllables)
		for i := 0; i < parts; i++ {
			b.WriteString(onsets[rng.IntN(len(onsets))])
			b.WriteString(vowels[rng.IntN(len(vowels))])
		}
		b.WriteString(tails[rng.IntN(len(tails))])
		w := b.String()
		if len(w) < 3 || len(w) > 20 || seen[w] {
			continue
		}
		seen[w] = true
		words = append(words, strings.ToUpper(w[:1])+w[1:])
	}
	cum := make([]float64, n)
	total := 0.0
	for r := range words {
		total += 1 / math.Pow(float64(r)+skewK, skewS)
		cum[r] = total
	}
	for r := range cum {
		cum[r] /= total
	}
	return vocab{words, cum}
}

func (v vocab) pick(rng *rand.Rand) string {
	return v.words[sort.SearchFloat64s(v.cum, rng.Float64())]
}

type generator struct {
	seed                 uint64
	first, last, city    vocab
	birthBase, createdAt time.Time
}

func newGenerator(seed uint64) *generator {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	return &generator{
		seed:      seed,
		first:     buildVocab(rng, firstNameCount, firstTails, 2, 50, 0.9),
		last:      buildVocab(rng, lastNameCount, lastTails, 2, 50, 0.9),
		city:      buildVocab(rng, cityCount, cityTails, 2, 1, 1.0),
		birthBase: time.Date(1950, 1, 1, 0, 0, 0, 0, time.UTC),
		createdAt: time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC),
	}
}

// chunk renders rows [start, end) (ids start+1..end) as TSV.
func (g *generator) chunk(index, start, end int) []byte {
	rng := rand.New(rand.NewPCG(g.seed, uint64(index)+1))
	buf := make([]byte, 0, (end-start)*160)
	for id := start + 1; id <= end; id++ {
		first, last := g.first.pick(rng), g.last.pick(rng)
		created := g.createdAt.Add(time.Duration(rng.Int64N(10*365*86400)) * time.Second)
		updated := created.Add(time.Duration(rng.Int64N(365*86400)) * time.Second)
		birth := g.birthBase.AddDate(0, 0, rng.IntN(57*365))
		buf = strconv.AppendInt(buf, int64(id), 10)
		buf = append(buf, '\t')
		buf = append(buf, strings.ToLower(first)...)
		buf = append(buf, '.')
		buf = append(buf, strings.ToLower(last)...)
		buf = append(buf, '.')
		buf = strconv.AppendInt(buf, int64(id), 10)
		buf = append(buf, '@')
		buf = append(buf, domains[rng.IntN(len(domains))]...)
		buf = append(buf, '\t')
		buf = append(buf, first...)
		buf = append(buf, '\t')
		buf = append(buf, last...)
		buf = append(buf, '\t')
		buf = birth.AppendFormat(buf, "2006-01-02")
		buf = append(buf, '\t')
		buf = append(buf, "fmx"[rng.IntN(100)%3])
		buf = append(buf, '\t')
		buf = append(buf, g.city.pick(rng)...)
		buf = append(buf, '\t')
		n := 1 + rng.IntN(4)
		for i := 0; i < n; i++ {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, interests[rng.IntN(len(interests))]...)
		}
		buf = append(buf, '\t')
		buf = created.AppendFormat(buf, "2006-01-02 15:04:05")
		buf = append(buf, '\t')
		buf = updated.AppendFormat(buf, "2006-01-02 15:04:05")
		buf = append(buf, '\n')
	}
	return buf
}

func main() {
	rows := flag.Int("rows", 8_000_000, "number of accounts")
	seed := flag.Uint64("seed", 42, "seed of every random choice")
	out := flag.String("out", "-", "output file ('-' = stdout)")
	progress := flag.Bool("progress", false, "print 'rows N' lines on stderr as chunks are written")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "generator goroutines")
	flag.Parse()
	if *rows <= 0 || *workers <= 0 {
		fmt.Fprintln(os.Stderr, "datagen: -rows and -workers must be positive")
		os.Exit(2)
	}
	w := os.Stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "datagen:", err)
			os.Exit(1)
		}
		defer f.Close()
		w = f
	}
	if err := generate(newGenerator(*seed), *rows, *workers, w, *progress); err != nil {
		fmt.Fprintln(os.Stderr, "datagen:", err)
		os.Exit(1)
	}
}

func generate(g *generator, rows, workers int, out *os.File, progress bool) error {
	chunks := (rows + chunkRows - 1) / chunkRows
	results := make([]chan []byte, chunks)
	for i := range results {
		results[i] = make(chan []byte, 1)
	}
	// chunks are handed out in order, each after taking a slot that the writer frees once the chunk is
	// written: memory stays bounded and the lowest unwritten chunk is always being generated.
	sem := make(chan struct{}, workers*2)
	next := make(chan int)
	go func() {
		for i := 0; i < chunks; i++ {
			sem <- struct{}{}
			next <- i
		}
		close(next)
	}()
	for w := 0; w < workers; w++ {
		go func() {
			for i := range next {
				start, end := i*chunkRows, min((i+1)*chunkRows, rows)
				results[i] <- g.chunk(i, start, end)
			}
		}()
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	written := 0
	for i := 0; i < chunks; i++ {
		data := <-results[i]
		<-sem
		if _, err := bw.Write(data); err != nil {
			return err
		}
		written = min((i+1)*chunkRows, rows)
		if progress {
			fmt.Fprintf(os.Stderr, "rows %d\n", written)
		}
	}
	return bw.Flush()
}
