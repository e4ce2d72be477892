package runrecord

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"slices"
)

// fieldScanner reads CSV records as encoding/csv does with Comment '#' and
// any number of fields (blank and comment lines skipped, a CR before the
// newline dropped), splitting lines without quotes itself; from the first
// line holding a quote on, it hands the rest of the input to encoding/csv.
// The fields returned are valid until the next call.
type fieldScanner struct {
	br     *bufio.Reader
	line   int    // lines read so far
	long   []byte // a line longer than the reader's buffer
	fields [][]byte
	cr     *csv.Reader // after the first quote
	crBase int         // lines before the csv reader's first
}

func newFieldScanner(r io.Reader) *fieldScanner {
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < 1<<16 {
		br = bufio.NewReaderSize(r, 1<<16)
	}
	return &fieldScanner{br: br}
}

// next returns the next record's fields and the line it starts on, io.EOF
// after the last.
func (s *fieldScanner) next() ([][]byte, int, error) {
	var start int
	for {
		if s.cr != nil {
			return s.nextCSV()
		}
		raw, err := s.readLine()
		if len(raw) == 0 {
			if err == nil {
				err = io.EOF
			}
			return nil, 0, err
		}
		s.line++
		b := raw
		if n := len(b); n > 0 && b[n-1] == '\n' {
			b = b[:n-1]
		}
		if n := len(b); n > 0 && b[n-1] == '\r' { // before the newline, or the end of the input
			b = b[:n-1]
		}
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		if bytes.IndexByte(b, '"') >= 0 {
			s.cr = csv.NewReader(io.MultiReader(bytes.NewReader(slices.Clone(raw)), s.br))
			s.cr.Comment = '#'
			s.cr.FieldsPerRecord = -1
			s.cr.ReuseRecord = true
			s.crBase = s.line - 1
			continue
		}
		// A byte loop: fields are a few bytes each, shorter than
		// bytes.IndexByte's start-up cost.
		s.fields, start = s.fields[:0], 0
		for i, c := range b {
			if c == ',' {
				s.fields = append(s.fields, b[start:i])
				start = i + 1
			}
		}
		s.fields = append(s.fields, b[start:])
		return s.fields, s.line, nil
	}
}

func (s *fieldScanner) nextCSV() ([][]byte, int, error) {
	rec, err := s.cr.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			pe.StartLine += s.crBase
			pe.Line += s.crBase
		}
		return nil, 0, err
	}
	line, _ := s.cr.FieldPos(0)
	s.fields = s.fields[:0]
	for _, f := range rec {
		s.fields = append(s.fields, []byte(f))
	}
	return s.fields, line + s.crBase, nil
}

// readLine returns the next line with its newline (none at the end of the
// input), however long.
func (s *fieldScanner) readLine() ([]byte, error) {
	b, err := s.br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return b, err
	}
	s.long = append(s.long[:0], b...)
	for err == bufio.ErrBufferFull {
		b, err = s.br.ReadSlice('\n')
		s.long = append(s.long, b...)
	}
	return s.long, err
}

// RecordLine is the line on which record k (0: the first after the header)
// of a CSV file starts, 0 when the file cannot be read or is shorter: for
// naming a row in an error without keeping every row's line.
func RecordLine(path string, k int) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	s := newFieldScanner(f)
	for n := -1; ; n++ { // -1: the header
		_, line, err := s.next()
		if err != nil {
			return 0
		}
		if n == k {
			return line
		}
	}
}
