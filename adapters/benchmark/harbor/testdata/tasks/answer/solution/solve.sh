#!/bin/sh
[ -f seed.txt ] && echo 42 > answer.txt
