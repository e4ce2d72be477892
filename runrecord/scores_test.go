package runrecord

import (
	"bytes"
	"strings"
	"testing"
)

const sample = `benchmark,config,condition,checkpoint,task,metric,value,tokens
gamecraft,c1,vanilla,1,t1,overall,40.5,2590000
gamecraft,c1,hoh,3,t1,overall,71.25,
`

func TestDecodeAndRoundTrip(t *testing.T) {
	rows, err := DecodeScores(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Value != 40.5 || rows[0].Tokens != 2590000 || rows[1].HasTokens() {
		t.Fatalf("unexpected rows %+v", rows)
	}
	if rows[1].Arm().String() != "hoh@3" || rows[0].Arm().String() != "vanilla" || rows[0].Rep != 1 {
		t.Fatalf("arms: %v %v", rows[0].Arm(), rows[1].Arm())
	}
	var buf bytes.Buffer
	if err := EncodeScores(&buf, rows); err != nil {
		t.Fatal(err)
	}
	again, err := DecodeScores(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if again[0].Value != rows[0].Value || again[0].Tokens != rows[0].Tokens || again[1].HasTokens() {
		t.Fatalf("round trip changed rows: %+v", again)
	}
}

func TestDecodeErrorsNameTheLine(t *testing.T) {
	cases := map[string]string{
		"unknown column \"colour\"":         "benchmark,config,condition,checkpoint,task,metric,value,colour\n",
		"missing required column \"value\"": "benchmark,config,condition,checkpoint,task,metric\n",
		"line 3: value":                     "benchmark,config,condition,checkpoint,task,metric,value\nb,c,hoh,1,t,m,1\nb,c,hoh,1,t2,m,abc\n",
		"line 2: checkp":                    "benchmark,config,condition,checkpoint,task,metric,value\nb,c,hoh,0,t,m,1\n",
		"line 2: empty t":                   "benchmark,config,condition,checkpoint,task,metric,value\nb,c,hoh,1,,m,1\n",
		"line 3: empty metric":              "benchmark,config,condition,checkpoint,task,metric,value\nb,c,hoh,1, t,m,1\nb,c,hoh,1,t, \t ,1\n",
		"line 2: value \"NaN\"":             "benchmark,config,condition,checkpoint,task,metric,value\nb,c,hoh,1,t,m,NaN\n",
	}
	for want, in := range cases {
		_, err := DecodeScores(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("input %q: error %v, want it to contain %q", in, err, want)
		}
	}
}

func TestNumbersAreDecimalOnly(t *testing.T) {
	const head = "benchmark,config,condition,checkpoint,task,metric,value\n"
	for _, v := range []string{"0x1p4", "1_5", "Inf", "NaN", "+Inf", "1e", ".", "1.2.3"} {
		_, err := DecodeScores(strings.NewReader(head + "b,c,hoh,1,t,m," + v + "\n"))
		if err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("value %q: want an error at line 2, got %v", v, err)
		}
	}
	for _, v := range []string{"16", "-4.5", "+.5", "7.", "1e3", "2.5E-2"} {
		if _, err := DecodeScores(strings.NewReader(head + "b,c,hoh,1,t,m," + v + "\n")); err != nil {
			t.Errorf("value %q: %v", v, err)
		}
	}
}
