// sorting.c — insertion sort, merge sort, quicksort and the C library's qsort on the same
// pseudo-random data; each result is checked and summarised.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT 400

static unsigned random_state = 12345;
static unsigned next_random(void) {
    random_state = random_state * 1103515245u + 12345u;
    return random_state >> 8;
}

static void insertion_sort(int* values, int count) {
    for (int i = 1; i < count; ++i) {
        int value = values[i], j = i - 1;
        for (; j >= 0 && values[j] > value; --j) values[j + 1] = values[j];
        values[j + 1] = value;
    }
}

static void merge_sort(int* values, int* scratch, int count) {
    if (count < 2) return;
    int half = count / 2;
    merge_sort(values, scratch, half);
    merge_sort(values + half, scratch, count - half);
    int left = 0, right = half, out = 0;
    while (left < half && right < count) scratch[out++] = values[left] <= values[right] ? values[left++] : values[right++];
    while (left < half) scratch[out++] = values[left++];
    while (right < count) scratch[out++] = values[right++];
    memcpy(values, scratch, sizeof(int) * (size_t)count);
}

static void quicksort(int* values, int low, int high) {
    while (low < high) {
        int pivot = values[(low + high) / 2], i = low, j = high;
        while (i <= j) {
            while (values[i] < pivot) ++i;
            while (values[j] > pivot) --j;
            if (i <= j) {
                int swap = values[i];
                values[i++] = values[j];
                values[j--] = swap;
            }
        }
        if (j - low < high - i) {
            quicksort(values, low, j);
            low = i;
        } else {
            quicksort(values, i, high);
            high = j;
        }
    }
}

static int compare_ints(const void* a, const void* b) {
    int x = *(const int*)a, y = *(const int*)b;
    return (x > y) - (x < y);
}

static void report(const char* name, const int* values) {
    int sorted = 1;
    unsigned checksum = 0;
    for (int i = 0; i < COUNT; ++i) {
        if (i > 0 && values[i - 1] > values[i]) sorted = 0;
        checksum = checksum * 31u + (unsigned)values[i];
    }
    printf("%-14s sorted=%d min=%d max=%d median=%d checksum=%08x\n", name, sorted, values[0], values[COUNT - 1],
           values[COUNT / 2], checksum);
}

int main(void) {
    static int original[COUNT], values[COUNT], scratch[COUNT];
    for (int i = 0; i < COUNT; ++i) original[i] = (int)(next_random() % 20001) - 10000;

    memcpy(values, original, sizeof values);
    insertion_sort(values, COUNT);
    report("insertion sort", values);

    memcpy(values, original, sizeof values);
    merge_sort(values, scratch, COUNT);
    report("merge sort", values);

    memcpy(values, original, sizeof values);
    quicksort(values, 0, COUNT - 1);
    report("quicksort", values);

    memcpy(values, original, sizeof values);
    qsort(values, COUNT, sizeof(int), compare_ints);
    report("qsort", values);
    return 0;
}
