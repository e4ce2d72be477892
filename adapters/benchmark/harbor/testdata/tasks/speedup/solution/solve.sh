#!/bin/sh
echo fast > fast.txt
