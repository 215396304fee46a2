package pdfparse

// helveticaWidths returns the advance widths (thousandths of an em) of the
// printable ASCII characters 32..126 in Helvetica. They stand in for the
// metrics of standard fonts that PDFs may use without a /Widths array; a
// close estimate is enough to find word and column gaps.
func helveticaWidths() [95]float64 {
	return [95]float64{
		278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, // space ! " # $ % & ' ( ) * + , - . /
		556, 556, 556, 556, 556, 556, 556, 556, 556, 556, // 0-9
		278, 278, 584, 584, 584, 556, 1015, // : ; < = > ? @
		667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, // A-M
		722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, // N-Z
		278, 278, 278, 469, 556, 333, // [ \ ] ^ _ `
		556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, // a-m
		556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, // n-z
		334, 260, 334, 584, // { | } ~
	}
}
