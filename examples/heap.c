// heap.c — dynamic memory: a linked list, a growing array (realloc), a chained hash table counting
// words, and a check that freed memory is reused and that an impossible request returns NULL.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Node {
    int value;
    struct Node* next;
} Node;

typedef struct Entry {
    char* word;
    int count;
    struct Entry* next;
} Entry;

#define BUCKETS 31

static unsigned hash(const char* text) {
    unsigned h = 5381;
    while (*text) h = h * 33 + (unsigned char)*text++;
    return h % BUCKETS;
}

static void count_word(Entry** table, const char* word) {
    Entry** slot = &table[hash(word)];
    for (Entry* entry = *slot; entry; entry = entry->next) {
        if (strcmp(entry->word, word) == 0) {
            ++entry->count;
            return;
        }
    }
    Entry* entry = malloc(sizeof *entry);
    entry->word = strdup(word);
    entry->count = 1;
    entry->next = *slot;
    *slot = entry;
}

int main(void) {
    Node* list = NULL;
    for (int i = 1; i <= 100; ++i) {
        Node* node = malloc(sizeof *node);
        node->value = i * i;
        node->next = list;
        list = node;
    }
    long sum = 0;
    int length = 0;
    while (list) {
        Node* next = list->next;
        sum += list->value;
        ++length;
        free(list);
        list = next;
    }
    printf("list of %d squares, sum %ld\n", length, sum);

    int capacity = 1, size = 0, reallocations = 0;
    int* array = malloc(sizeof(int) * (size_t)capacity);
    for (int i = 0; i < 1000; ++i) {
        if (size == capacity) {
            capacity *= 2;
            array = realloc(array, sizeof(int) * (size_t)capacity);
            ++reallocations;
        }
        array[size++] = 3 * i + 1;
    }
    printf("array of %d elements (capacity %d after %d reallocations), last %d\n", size, capacity, reallocations,
           array[size - 1]);
    free(array);

    Entry* table[BUCKETS] = {0};
    char text[] = "the cat and the dog and the bird saw the cat run and the dog sleep";
    for (char* word = strtok(text, " "); word; word = strtok(NULL, " ")) count_word(table, word);
    const char* queries[] = {"the", "and", "cat", "dog", "bird", "fish"};
    for (int i = 0; i < 6; ++i) {
        int count = 0;
        for (Entry* entry = table[hash(queries[i])]; entry; entry = entry->next) {
            if (strcmp(entry->word, queries[i]) == 0) count = entry->count;
        }
        printf("'%s' appears %d times\n", queries[i], count);
    }
    int distinct = 0;
    for (int b = 0; b < BUCKETS; ++b) {
        while (table[b]) {
            Entry* next = table[b]->next;
            free(table[b]->word);
            free(table[b]);
            table[b] = next;
            ++distinct;
        }
    }
    printf("%d distinct words\n", distinct);

    char* first = malloc(200);
    free(first);
    char* second = malloc(200);
    printf("freed block reused: %s\n", first == second ? "yes" : "no");
    free(second);
    printf("malloc(1 MB) on a 32 KB machine returns NULL: %s\n", malloc(1 << 20) == NULL ? "yes" : "no");
    return 0;
}
